"""scripts/doc_tables.py: every table of README.md and the docs that quotes a results record
is drawn from it, so a figure typed by hand (or left behind by a new run) fails here."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.support import ROOT, SCRIPTS

# Pages of design rationale: one-time comparisons with code that no longer exists, which no
# record could regenerate (the history of figures is CHANGELOG.md's).
RATIONALE_PAGES = {"docs/design-notes.md", "docs/tried.md"}
# Tables of options and defaults, not measurements, by their header's first cells.
OPTION_TABLES = ("| option |", "| `--method` | what it is |", "| `--decode` | objective |")
# Tables of figures that no record here regenerates, each with the reason.
UNRECORDED = {
    ("docs/experiments/lm-standin.md", "| nltk corpus |"): "its corpora download only",
    ("docs/experiments/lm-standin.md", "| method | m = 2 |"): "its corpora download only",
    ("docs/experiments/lm-standin.md", "| | 0.25 of train |"): "its corpora download only",
    # token counts of the corpus, the paper's and ours (`make brown` writes them), no result
    ("docs/experiments/brown.md", "| | train | dev | test |"): "the corpus, not a result",
    ("docs/getting-started.md", "| file | content |"): "the standard split, not a result",
    # their KL cells are checked against the figures' JSON below
    ("docs/experiments/wcfg.md", "| method | 10^2 |"): "wcfg_kl.json",
    ("docs/experiments/wcfg.md", "| method | 10^3 |"): "wcfg_kl_3x6.json",
}


@pytest.fixture
def doc_tables(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import doc_tables

    return doc_tables


def copy_of_the_docs(tmp_path):
    """README.md and docs/ (pages and records) in ``tmp_path``."""
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("*.png"))
    return tmp_path


def test_every_marked_table_is_its_record(doc_tables):
    assert doc_tables.differences() == []


def test_a_wrong_digit_in_any_marked_table_fails(doc_tables, tmp_path):
    """Plant one wrong digit in each marked table in turn: the check names that page."""
    root = copy_of_the_docs(tmp_path)
    planted = 0
    for page, names in doc_tables.marked(root).items():
        path = root / page
        text = path.read_text(encoding="utf-8")
        for match in doc_tables.MARK.finditer(text):
            body = match["body"]
            # a table's rows past its header and rule; a paragraph whole
            rows = body.split("\n", 2)[-1] if body.startswith("|") else body
            digit = re.search(r"\d\.\d", rows)
            assert digit, f"{page}: table {match['name']} has no figure"
            at = match.start("body") + len(body) - len(rows) + digit.start()
            wrong = "9" if text[at] != "9" else "8"
            path.write_text(text[:at] + wrong + text[at + 1 :], encoding="utf-8")
            diffs = doc_tables.differences(root, root / "docs" / "figures")
            assert len(diffs) == 1 and diffs[0].startswith(f"--- {page}"), (page, names)
            path.write_text(text, encoding="utf-8")
            planted += 1
    assert planted >= len(doc_tables.TABLES)


def test_every_table_of_figures_in_the_docs_is_drawn_from_a_record(doc_tables):
    """A table of figures (a decimal, or four numbers of two digits or more: perplexities
    are whole numbers) in README or a docs page lies inside a marked block, but on the
    rationale pages, in option tables and in the few tables listed above."""
    typed = []
    for page in (str(p.relative_to(ROOT)) for p in doc_tables.pages()):
        if page in RATIONALE_PAGES:
            continue
        outside = doc_tables.MARK.sub("", (ROOT / page).read_text(encoding="utf-8"))
        for table in re.findall(r"(?:^\|.*\n)+", outside, re.M):
            head = table.splitlines()[0]
            rows = "\n".join(table.splitlines()[2:])
            figures = re.search(r"\d\.\d", table) or len(re.findall(r"\b\d{2,}\b", rows)) >= 4
            if not figures or head.startswith(OPTION_TABLES):
                continue
            if not any(page == p and head.startswith(h) for p, h in UNRECORDED):
                typed.append(f"{page}: {head}")
    assert typed == [], f"tables typed by hand: {typed}"


def test_every_table_name_is_used_and_every_record_it_reads_exists(doc_tables):
    used = {name for names in doc_tables.marked().values() for name in names}
    assert used == set(doc_tables.TABLES)


def test_an_unknown_table_name_is_an_error(doc_tables, tmp_path):
    text = "<!-- table no-such-table -->\n| a |\n|---|\n<!-- end table -->\n"
    with pytest.raises(KeyError, match="no-such-table"):
        doc_tables.rendered(text, tmp_path)


def test_every_picture_is_on_a_page_and_has_the_json_it_was_drawn_from():
    text = "".join(
        p.read_text(encoding="utf-8")
        for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    )
    for png in sorted((ROOT / "docs" / "figures").glob("*.png")):
        assert f"figures/{png.name}" in text, f"{png.name} is on no page"
        assert png.with_suffix(".json").exists(), f"{png.name} has no JSON"


def test_the_records_the_tables_read_say_where_they_came_from():
    """ptb.json, speed.json and languages.json name their commit and machine, and the
    first two the command that wrote them (languages.json's runs carry theirs)."""
    for name in ("ptb", "speed", "languages"):
        text = (ROOT / "docs" / "figures" / f"{name}.json").read_text(encoding="utf-8")
        record = json.loads(text)
        assert len(record["commit"]["commit"]) == 40, name
        assert record["machine"]["cpus"] >= 1, name
        if name != "languages":
            assert record["command"].startswith("python scripts/"), name


def test_the_wcfg_kl_tables_are_the_figures_they_are_drawn_beside():
    """docs/experiments/wcfg.md's random-PCFG tables (KL per method and sample size) carry
    the geometric means plotted in wcfg_kl.json and wcfg_kl_3x6.json; their seconds and
    per-target rows come from the same runs (scripts/wcfg_random.py)."""
    text = (ROOT / "docs" / "experiments" / "wcfg.md").read_text(encoding="utf-8")
    checked = 0
    for name in ("wcfg_kl", "wcfg_kl_3x6"):
        figure = json.loads((ROOT / "docs" / "figures" / f"{name}.json").read_text())
        for series in figure["panels"][0]["series"]:
            heads = "".join(f" 10^{len(str(x)) - 1} |" for x in series["x"])
            table = re.search(rf"^\| method \|{re.escape(heads)}\n(?:^\|.*\n)+", text, re.M)
            assert table, (name, heads)
            row = re.search(rf"^\| {re.escape(series['label'])} \|(.*)$", table[0], re.M)
            assert row, (name, series["label"])
            cells = re.findall(r"(\d\.\de[-+]\d\d)", row[1])
            assert cells == [f"{y:.1e}" for y in series["y"]], (name, series["label"])
            checked += 1
    assert checked == 6


def test_product_members_table_marks_the_product_best_toml_trains(doc_tables):
    """The bold row is the variant configs/best.toml ships (its members, with or without
    unary rules as it says), named in words; not whichever dev mean is highest."""
    shipped = doc_tables.shipped_product()
    assert shipped.startswith(("sm6+", "smu6+")) and shipped.endswith("+pivot_em16+em16")
    assert doc_tables.product_label("smu6+em16") == (
        "six split-merge grammars with unary rules and an EM grammar (`configs/em16.toml`)"
    )
    table = doc_tables.TABLES["product-members"](ROOT / "docs" / "figures")
    bold = [line for line in table.splitlines() if "**" in line]
    assert len(bold) == 1 and bold[0].startswith(f"| {doc_tables.product_label(shipped)} |")


def test_the_berkeley_anchor_is_the_cycle_dev_picks_in_the_folders_run(doc_tables, tmp_path):
    """README's bold Berkeley row is the cycle dev picks among the cycles of the trainer run
    the parser's folder grammars come from (the run whose ``same_as`` names them); its
    speed column is filled only where the speed record timed that grammar; without such a
    run the tables refuse to be drawn."""
    figures = shutil.copytree(ROOT / "docs" / "figures", tmp_path / "figures")
    seeds = json.loads((figures / "berkeley_seeds.json").read_text())
    ours = [r for r in seeds["runs"] if r.get("same_as")]
    assert len(ours) == 1 and "train0001-0149-sm4.gr" in ours[0]["same_as"]
    run = ours[0]
    anchor = doc_tables.berkeley_anchor(figures)
    by_cycle = run["dev_f1_by_cycle"]
    assert anchor["cycle"] == int(max(by_cycle, key=lambda c: (by_cycle[c], -int(c))))
    table = doc_tables.TABLES["ptb-readme"](figures)
    bold = [line for line in table.splitlines() if "Berkeley" in line and "**" in line]
    assert len(bold) == 1 and bold[0].startswith(f"| **{anchor['label']}** |")
    speed = json.loads((figures / "speed.json").read_text())
    timed = [line for line in table.splitlines() if "Berkeley" in line and "| 1x |" in line]
    assert len(timed) == 1
    assert (timed[0] == bold[0]) == (speed["berkeley"].get("grammar") == anchor["grammar"])
    for r in seeds["runs"]:
        r.pop("same_as", None)
    (figures / "berkeley_seeds.json").write_text(json.dumps(seeds))
    with pytest.raises(SystemExit, match="same_as"):
        doc_tables.TABLES["ptb-readme"](figures)
