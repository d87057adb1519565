"""`make demo`'s out/report.html (scripts/demo.py write_report) rendered in headless Chromium:
the table is there and every figure loads. Chromium is Debian's package (.ci/run installs
it); without it the test is skipped here, but never in CI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import SCRIPTS, chromium, invoke, needs_chromium, synthetic_treebank

pytestmark = needs_chromium

# Appended to a copy of the page beside it (so that its relative image paths resolve): once
# everything has loaded, the body says how many images decoded.
CHECK = """<script>
window.addEventListener("load", () => {
  const images = [...document.images];
  const ok = images.filter((i) => i.complete && i.naturalWidth > 0).length;
  document.body.setAttribute("data-images", ok + "/" + images.length);
});
</script>"""


def render(page: Path) -> str:
    """The DOM of ``page`` after Chromium loaded it headless (file://, no network)."""
    check = page.with_name("check.html")
    check.write_text(page.read_text(encoding="utf-8").replace("</body>", CHECK + "</body>"))
    return chromium(page.parent, "--dump-dom", check.as_uri())


@pytest.fixture
def report(tmp_path, monkeypatch):
    """A report from a real (small) run: EM trained with --log, its parsing speed by length."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import demo

    d = tmp_path
    train = synthetic_treebank(d, 150, 30)
    (d / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in train))
    log = d / "em.jsonl"
    result = invoke(
        "train", d / "train.mrg", "--method", "em", "--states", "2", "--iterations", "3",
        "--dev", d / "test.mrg", "--dev-f1-every", "1", "--log", log, "-o", d / "em.npz", "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    logs = {"em": [json.loads(line) for line in log.read_text().splitlines()]}
    sentences = [line.split() for line in (d / "test.txt").read_text().splitlines()]
    speed = {"em": demo.by_length(str(d / "em.npz"), None, sentences, d, 10)}
    table = "Data: a synthetic test\n\n| method | strict F1 |\n|---|---|\n| em <b> | 91.25 |\n"
    out = d / "out"
    out.mkdir()
    return demo.write_report(out, table, logs, speed, synthetic=True, parses="parses.html")


def test_the_report_renders_with_its_table_and_every_image_loaded(report):
    dom = render(report)
    assert re.search(r'data-images="2/2"', dom), dom[-3000:]
    assert "<td>91.25</td>" in dom and "<td>em &lt;b&gt;</td>" in dom  # escaped, not markup
    assert "SYNTHETIC" in dom
    assert '<a href="parses.html">' in dom  # lpcfg report's page of the test parses
    assert sorted(p.name for p in (report.parent / "figures").iterdir()) == [
        "learning_curves.json",
        "learning_curves.png",
        "speed_by_length.json",
        "speed_by_length.png",
    ]


def test_a_missing_figure_is_seen(report):
    """The check can fail: with one figure gone, Chromium loads one image of two."""
    (report.parent / "figures" / "speed_by_length.png").unlink()
    assert 'data-images="1/2"' in render(report)
