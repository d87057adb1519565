"""`lpcfg report` and ``analysis.html_report``: the page's figures are EVALB's, its marks sit
on the right nodes, it needs no network, and it works in a browser (headless Chromium: the
trees render, a filter in the address hides the right cards, a screenshot is not blank)."""

from __future__ import annotations

import re
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

import lpcfg_cli.cli.report_command as report_command
from lpcfg_cli.analysis.error_kinds import KINDS
from lpcfg_cli.analysis.html_report import html_report
from lpcfg_cli.evalb import Status, evaluate_lines
from tests.support import chromium, invoke, needs_chromium

EVALB_DATA = Path(__file__).resolve().parent / "data" / "evalb"

# Sentence 1: parse 0 attaches the PP to the object NP (one extra bracket, NP over "a dog
# with a telescope": test tree position 0.1.1); parse 1 leaves the PP out (one missing
# gold bracket: gold position 0.1.2). Sentence 2 both parse right; sentence 3 parse 0
# fails, "()", and parse 1 gets an extra QP over one word.
GOLD = [
    "(TOP (S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog)) "
    "(PP (IN with) (NP (DT a) (NN telescope)))) (. .)))",
    "(TOP (S (NP (PRP She)) (VP (VBZ runs)) (. .)))",
    "(TOP (S (NP (NNS Dogs)) (VP (VBP bark) (ADVP (RB loudly)) (PP (IN at) (NP (NN night)))) "
    "(. .)))",
]
PP_ON_NP = [
    "(TOP (S (NP (DT The) (NN man)) (VP (VBD saw) (NP (NP (DT a) (NN dog)) "
    "(PP (IN with) (NP (DT a) (NN telescope))))) (. .)))",
    GOLD[1],
    "()",
]
NO_PP = [
    "(TOP (S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog)) "
    "(IN with) (NP (DT a) (NN telescope))) (. .)))",
    GOLD[1],
    GOLD[2].replace("(NP (NNS Dogs))", "(NP (QP (NNS Dogs)))"),
]
VOID = {"meta", "input", "br", "img", "hr", "link", "area", "base", "col", "source", "wbr"}


class Page(HTMLParser):
    """The elements of a page, each with its attributes and the sentence card and parse
    block it sits in; and the text of elements by id."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[dict] = []
        self.stack: list[tuple[str, dict]] = []
        self.texts: dict[str, list[str]] = {}
        self.feed(text)
        self.text_of = {k: "".join(v) for k, v in self.texts.items()}

    def context(self, key: str) -> str | None:
        return next((a[key] for _, a in reversed(self.stack) if key in a), None)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "section" and "sentence" in a.get("class", "").split():
            a["card"] = a["data-id"]
        if tag == "div" and "parse" in a.get("class", "").split():
            a["block"] = a["data-test"]
        a["card"] = a.get("card") or self.context("card")
        a["block"] = a.get("block") or self.context("block")
        self.elements.append({"tag": tag, **a})
        if tag not in VOID:
            self.stack.append((tag, a))

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        for _, a in self.stack:
            if "id" in a:
                self.texts.setdefault(a["id"], []).append(data)

    def find(self, tag: str, cls: str | None = None, **attrs: str) -> list[dict]:
        return [
            e
            for e in self.elements
            if e["tag"] == tag
            and (cls is None or cls in e.get("class", "").split())
            and all(e.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]


def cell(page: Page, row: list[dict], cls: str, test: int) -> dict:
    return next(e for e in row if cls in e.get("class", "").split() and e["data-test"] == str(test))


@pytest.fixture(scope="module")
def small() -> str:
    return html_report(GOLD, [("PP on NP", PP_ON_NP), ("no PP <b>", NO_PP)], title="t & t")


@pytest.fixture(scope="module")
def berkeley() -> tuple[list[str], list[tuple[str, list[str]]], str, Page]:
    """A real parser's output on 345 test sentences (two grammars), and their page."""
    gold = (EVALB_DATA / "berkeley_test_sm6" / "gold.mrg").read_text().splitlines()
    tests = [
        (name, (EVALB_DATA / name / "test.mrg").read_text().splitlines())
        for name in ("berkeley_test_sm6", "berkeley_test_xbar_sm0")
    ]
    text = html_report(gold, tests)
    return gold, tests, text, Page(text)


# --- the library ------------------------------------------------------------------------


def test_the_f1_table_holds_evalbs_figures(berkeley):
    gold, tests, text, _ = berkeley
    for k, (_, lines) in enumerate(tests):
        result = evaluate_lines(gold, lines)
        row = _between(text, f'<tr data-test="{k}">', "</tr>")
        assert f'<td class="strict-f1">{result.strict_f1:.2f}</td>' in row
        assert f'<td class="f1">{result.f1:.2f}</td>' in row
        assert f'<td class="recall">{result.all.figures()["recall"]:.2f}</td>' in row
        assert f'<td class="scored">{result.all.valid}</td>' in row
        assert f'<td class="not-scored">{result.not_scored}</td>' in row
    a, b = (evaluate_lines(gold, lines).strict_f1 for _, lines in tests)
    assert a != b


def test_the_kinds_totals_are_evalbs_bracket_errors(berkeley):
    gold, tests, text, _ = berkeley
    table = _between(text, '<section id="kinds">', "</section>")
    rows = table.split('<tr data-kind="')[1:]
    assert [row.split('"')[0] for row in rows] == list(KINDS)
    for k, (_, lines) in enumerate(tests):
        result = evaluate_lines(gold, lines)
        wrong = sum(
            (s.gold - s.matched) + (s.test - s.matched)
            for s in result.sentences
            if s.status is Status.OK
        )
        assert wrong > 100  # a real parser: many errors
        by_kind = [
            int(re.search(rf'<td class="brackets" data-test="{k}"><a [^>]*>(\d+)</a>', row)[1])
            for row in rows
        ]
        assert sum(by_kind) == wrong
        total = _between(table, '<tr class="total">', "</tr>")
        assert f'<td class="brackets" data-test="{k}">{wrong}</td>' in total


def _between(text: str, a: str, b: str) -> str:
    start = text.index(a) + len(a)
    return text[start : text.index(b, start)]


def test_one_card_per_sentence_and_the_page_stays_small(berkeley):
    gold, tests, text, page = berkeley
    cards = page.find("section", "sentence")
    assert [c["data-id"] for c in cards] == [str(i + 1) for i in range(len(gold))]
    assert all(c["data-length"].isdigit() for c in cards)
    # the gold tree once, and each parse's, per card
    svgs = page.find("svg")
    assert len(svgs) == len(gold) * (1 + len(tests))
    assert len(text.encode()) < 15e6 * 2 / 3  # 345 sentences x 2 parses; 3 parses < 15 MB


def test_the_planted_errors_are_marked_on_the_right_nodes(small):
    page = Page(small)
    extra = [e for e in page.find("g") if "extra" in e.get("class", "").split()]
    assert [(e["card"], e["block"], e["data-pos"], e["data-label"]) for e in extra] == [
        ("1", "0", "0.1.1", "NP"),
        ("3", "1", "0.0.0", "QP"),
    ]
    missing = [e for e in page.find("g") if "missing-1" in e.get("class", "").split()]
    assert [(e["card"], e["block"], e["data-pos"], e["data-label"]) for e in missing] == [
        ("1", None, "0.1.2", "PP")
    ]
    assert not [e for e in page.find("g") if "missing-0" in e.get("class", "").split()]
    cards = {c["data-id"]: c for c in page.find("section", "sentence")}
    assert cards["1"]["data-kinds-0"] == "PP attachment"
    assert cards["1"]["data-kinds-1"] != ""
    assert (cards["2"]["data-kinds-0"], cards["2"]["data-kinds-1"]) == ("", "")
    assert (cards["3"]["data-status-0"], cards["3"]["data-status-1"]) == ("skip", "ok")
    assert "not scored by EVALB" in small.split('id="s3"')[1]
    # names and titles are escaped, never markup
    assert "no PP &lt;b&gt;" in small and "<title>t &amp; t</title>" in small


def test_the_page_needs_no_network(berkeley, small):
    for text, page in ((small, Page(small)), berkeley[2:]):
        links = [e.get(a, "") for e in page.elements for a in ("src", "href", "xlink:href")]
        assert all(not link.startswith(("http:", "https:", "//")) for link in links if link)
        assert "<link" not in text and "@import" not in text and "url(" not in text
        assert page.find("script") and not [s for s in page.find("script") if s.get("src")]


def test_a_gold_line_with_no_parse_line_is_not_scored():
    text = html_report(GOLD, [("short", PP_ON_NP[:1])])
    cards = {c["data-id"]: c for c in Page(text).find("section", "sentence")}
    assert len(cards) == 3
    assert [cards[i]["data-status-0"] for i in "123"] == ["ok", "missing", "missing"]
    assert text.count("no parse line") >= 2


def test_a_tree_too_deep_to_draw_is_said_and_drawn_collapsed():
    deep = "(S " * 1100 + "(NN x)" + ")" * 1100
    text = html_report([deep], [("deep", [deep])])
    assert text.count("tree too deep to draw") == 2 and "<svg" not in text
    text = html_report([deep], [("deep", [deep])], max_depth=4)
    assert text.count("<svg") == 2 and 'class="node collapsed"' in text


# --- the command line ---------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    gold, a, b = tmp_path / "gold.mrg", tmp_path / "a.parsed", tmp_path / "b.parsed"
    for path, lines in ((gold, GOLD), (a, PP_ON_NP), (b, NO_PP)):
        path.write_text("\n".join(lines) + "\n")
    return gold, a, b


def test_the_command_writes_the_page_atomically(files, tmp_path, monkeypatch):
    gold, a, b = files
    opened = []
    real = report_command.atomic_output

    def spy(path, *args, **kwargs):
        opened.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(report_command, "atomic_output", spy)
    out = tmp_path / "r.html"
    res = invoke("report", gold, a, b, "--name", "A", "--name", "B", "-o", out)
    assert (res.exit_code, res.stdout) == (0, ""), res.output
    assert opened == [str(out)]
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    names = [e for e in Page(text).find("tr") if e.get("data-test")]
    assert len(names) == 2 and '<th scope="row">A</th>' in text
    listed = sorted(p.name for p in tmp_path.iterdir())
    assert listed == ["a.parsed", "b.parsed", "gold.mrg", "r.html"]  # no temporary file left
    # stdout by default, file names as names, and the same page as the library's
    res = invoke("report", gold, a)
    assert res.exit_code == 0
    assert res.stdout == html_report(GOLD, [("a.parsed", PP_ON_NP)])


def test_a_bad_tree_file_is_one_error_line(files, tmp_path):
    gold, a, _ = files
    bad = tmp_path / "bad.mrg"
    bad.write_text(GOLD[0] + "\n(TOP (S (NP (DT The) (NN man))\n")
    out = tmp_path / "r.html"
    res = invoke("report", bad, a, "-o", out)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"lpcfg: error: {bad}:2: malformed gold tree")
    assert not out.exists()
    # parses of other sentences: EVALB stops after 10 errors
    other = tmp_path / "other.parsed"
    other.write_text("(TOP (S (NP (NN x)) (VP (VB y))))\n" * 12)
    (tmp_path / "gold12.mrg").write_text((GOLD[1] + "\n") * 12)
    res = invoke("report", tmp_path / "gold12.mrg", other, "-o", out)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "EVALB stops after more than 10 errors" in res.stderr and not out.exists()
    res = invoke("report", gold, a, "--name", "only one", "--name", "two", "-o", out)
    assert res.exit_code == 2 and "--name given 2 times for 1 TEST" in res.stderr
    assert not out.exists()


def test_fewer_parse_lines_warn_and_are_not_scored(files, tmp_path):
    gold, a, _ = files
    short = tmp_path / "short.parsed"
    short.write_text(PP_ON_NP[0] + "\n")
    res = invoke("report", gold, short, "-o", tmp_path / "r.html")
    assert res.exit_code == 0
    assert res.stderr.startswith(
        f"lpcfg: warning: {short}: 1 lines but GOLD has 3: the last 2 gold sentences have no "
        "parse (not scored)"
    )
    text = (tmp_path / "r.html").read_text()
    assert [c["data-status-0"] for c in Page(text).find("section", "sentence")] == [
        "ok",
        "missing",
        "missing",
    ]


# --- in a browser -------------------------------------------------------------------------

# Appended to a copy of the page: once loaded, the body says how many drawn trees and
# words have a size on screen (laid out, not just in the markup).
CHECK = """<script>
window.addEventListener("load", () => {
  const svgs = [...document.querySelectorAll("svg")].filter(
    (s) => s.getBoundingClientRect().width > 0);
  const words = [...document.querySelectorAll("svg text")].filter(
    (t) => t.getComputedTextLength() > 0);
  const telescope = words.filter((t) => t.textContent === "telescope");
  document.body.setAttribute("data-rendered", [svgs, words, telescope].map((a) => a.length));
});
</script>"""


def shown(dom: str) -> tuple[list[str], str]:
    page = Page(dom)
    cards = [c["data-id"] for c in page.find("section", "sentence") if "hidden" not in c]
    return cards, page.text_of["shown"]


@needs_chromium
def test_the_page_renders_and_filters_from_its_address(small, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(small.replace("</body>", CHECK + "</body>"))
    dom = chromium(tmp_path, "--dump-dom", page.as_uri())
    svgs, texts, telescope = map(int, Page(dom).find("body")[0]["data-rendered"].split(","))
    assert svgs == 3 * 2 - 1  # gold and parse 0 per card; parse 0 failed on sentence 3
    assert texts > 60  # labels, tags and words
    assert telescope == 2  # sentence 1's word in its gold tree and in parse 0's
    assert shown(dom) == (["1", "2", "3"], "3 of 3 sentences shown")
    dom = chromium(tmp_path, "--dump-dom", page.as_uri() + "#kind=PP%20attachment")
    assert shown(dom) == (["1"], "1 of 3 sentences shown")
    dom = chromium(tmp_path, "--dump-dom", page.as_uri() + "#test=1&kind=none")
    assert shown(dom) == (["2"], "1 of 3 sentences shown")
    assert 'data-test="1"' in dom.split("<body", 1)[1][:80]  # parse 1's marks shown
    dom = chromium(tmp_path, "--dump-dom", page.as_uri() + "#min=3&max=7&q=dogs")
    assert shown(dom) == (["3"], "1 of 3 sentences shown")


def png_has_ink(path: Path) -> tuple[int, int, bool]:
    """A PNG's width and height, and whether some pixel is not white (8-bit RGB(A),
    not interlaced: what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (size,), kind = struct.unpack(">I", data[pos : pos + 4]), data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + size]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + size
    assert header is not None
    width, height, depth, color, _, _, interlace = header
    assert (depth, interlace) == (8, 0) and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw, stride, prior = zlib.decompress(idat), width * bpp, bytearray(width * bpp)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for x in range(stride):
            a = row[x - bpp] if x >= bpp else 0
            b, c = prior[x], prior[x - bpp] if x >= bpp else 0
            if kind == 1:
                row[x] = (row[x] + a) & 255
            elif kind == 2:
                row[x] = (row[x] + b) & 255
            elif kind == 3:
                row[x] = (row[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if any(row[x] != 255 for x in range(stride) if x % bpp < 3):
            return width, height, True
        prior = row
    return width, height, False


@needs_chromium
def test_a_screenshot_of_the_page_is_not_blank(small, tmp_path):
    page, shot = tmp_path / "report.html", tmp_path / "shot.png"
    page.write_text(small)
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", page.as_uri())
    assert shot.stat().st_size > 1000
    assert png_has_ink(shot) == (1200, 900, True)
    # the check can fail: a blank page's screenshot is all white
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", blank.as_uri())
    assert png_has_ink(shot) == (1200, 900, False)
