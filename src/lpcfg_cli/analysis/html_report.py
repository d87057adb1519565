"""One self-contained HTML page to look at parses: F1, errors by kind, every tree drawn.

``html_report(gold_lines, [(name, test_lines), ...])`` scores each parse file against the
gold trees as EVALB does (``evalb.evaluate_lines``), finds its errors by kind
(``error_kinds.classify_errors``) and writes one page holding

1. the F1 table: per parse file, EVALB's F1 and the strict F1, recall, precision, the
   sentences scored and not scored;
2. errors by kind: brackets and repairs of each kind per parse file, whose totals are
   EVALB's ``(gold - matched) + (test - matched)`` over its valid sentences;
3. a card per sentence: its words, the gold tree drawn once, each parse's tree drawn with
   its wrong (extra) brackets marked, its F1 and its repairs. The gold brackets a parse
   misses depend on the parse: the gold tree's node carries a class ``missing-N`` for
   each parse N that misses it, and the page's CSS shows those of the selected parse;
4. filters (inline script): the parse whose marks are shown, an error kind (sentences
   where that parse has a repair of that kind), sentence length, words. The filter is
   read from and written to the page's ``#`` fragment
   (``#test=1&kind=PP%20attachment&min=5&max=20&q=stock``), so that a filtered view is a
   link. Hidden cards carry the ``hidden`` attribute; a line says "N of M sentences shown".

The page needs no network: its style and script are inline, the trees inline SVG
(``drawing.tree_svg``). Sentences EVALB does not score (a failed parse ``()``, different
words, bad brackets, a gold line with no parse line) say so, with the tree if readable.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from lpcfg_cli.analysis.drawing import SVG_STYLE, phrase_positions, tree_svg
from lpcfg_cli.analysis.error_kinds import KINDS, ErrorAnalysis, SentenceErrors, classify_errors
from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.evalb import EvalResult, SentenceResult, Status, evaluate_lines
from lpcfg_cli.evalb.params import EvaluateOptions
from lpcfg_cli.evalb.scoring import fmeasure
from lpcfg_cli.treebank.ptb import parse_tree
from lpcfg_cli.treebank.tree import Tree, words

__all__ = ["ScoredParses", "html_report", "render_report", "score_parses"]


@dataclass
class ScoredParses:
    """One parse file of the report: its lines, EVALB's result and its errors by kind."""

    name: str
    lines: list[str]
    result: EvalResult
    errors: ErrorAnalysis

    def brackets_wrong(self) -> int:
        """EVALB's ``(gold - matched) + (test - matched)`` over its valid sentences."""
        block = self.result.all
        return (block.gold - block.matched) + (block.test - block.matched)

    def messages(self) -> dict[int, list[str]]:
        """EVALB's messages by sentence number ("2 : Words unmatch (a|b)")."""
        out: dict[int, list[str]] = {}
        for message in self.result.messages:
            number, _, text = message.partition(" : ")
            if number.isdigit():
                out.setdefault(int(number), []).append(text)
        return out


def score_parses(
    gold_lines: Sequence[str],
    tests: Sequence[tuple[str, Sequence[str]]],
    options: EvaluateOptions | None = None,
) -> list[ScoredParses]:
    """Each parse file scored against ``gold_lines`` (one tree per line, as EVALB reads
    them) with ``options`` (parameter file, cut-off). ``LpcfgError`` when there is nothing
    to report, or when EVALB would stop (more than its MAX_ERROR errors: the files hold
    different sentences)."""
    options = options or EvaluateOptions()
    params, cutoff = options.params, options.cutoff
    if not gold_lines:
        raise LpcfgError("no gold trees: nothing to report")
    if not tests:
        raise LpcfgError("no parses to report: give at least one parse file")
    out = []
    for name, lines in tests:
        lines = [line.rstrip("\r\n") for line in lines]
        result = evaluate_lines(gold_lines, lines, params, cutoff)
        if result.aborted:
            raise LpcfgError(
                f"{name}: EVALB stops after more than {params.max_error} errors (no "
                "summary); check that the gold and parse files hold the same sentences"
            )
        out.append(ScoredParses(name, lines, result, classify_errors(gold_lines, lines, params)))
    return out


def html_report(
    gold_lines: Sequence[str],
    tests: Sequence[tuple[str, Sequence[str]]],
    *,
    options: EvaluateOptions | None = None,
    max_depth: int | None = None,
    title: str = "lpcfg report",
) -> str:
    """The page (see the module) of ``tests``, ``(name, lines)`` each, one tree per line,
    against ``gold_lines``, scored with ``options`` (default: COLLINS.prm, cut-off 40);
    ``max_depth`` collapses deeper phrases of the trees drawn."""
    scored = score_parses(gold_lines, tests, options)
    return render_report(gold_lines, scored, max_depth=max_depth, title=title)


def render_report(
    gold_lines: Sequence[str],
    scored: Sequence[ScoredParses],
    *,
    max_depth: int | None = None,
    title: str = "lpcfg report",
    charset: str = "utf-8",
) -> str:
    """The page of parse files ``score_parses`` scored (``charset``: the encoding the page
    will be written in, named in its ``<meta>``)."""
    gold_lines = [line.rstrip("\r\n") for line in gold_lines]
    messages = [s.messages() for s in scored]
    cards = [_card(i, line, scored, messages, max_depth) for i, line in enumerate(gold_lines)]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head>',
        f'<meta charset="{_e(charset)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_STYLE}{SVG_STYLE}\n{_test_style(len(scored))}</style>",
        "</head>",
        '<body data-test="0">',
        f"<header><h1>{_e(title)}</h1>",
        f"<p>{len(gold_lines)} gold sentences, {len(scored)} parse "
        f"file{'s' if len(scored) != 1 else ''}; brackets as EVALB counts them "
        f"({_e(scored[0].result.params.name)}).</p></header>",
        _f1_table(scored),
        _kinds_table(scored),
        _controls(scored),
        '<main id="sentences">',
        *cards,
        "</main>",
        f"<script>{_SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _read(line: str | None) -> Tree | None:
    """The line's tree, None if there is none (no line, unreadable, ``()``)."""
    if line is None:
        return None
    try:
        tree = parse_tree(line)
    except (ValueError, TimeoutError):  # as treebank.ptb reads a tree
        return None
    return tree if len(tree) else None


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _f1_table(scored: Sequence[ScoredParses]) -> str:
    """Per parse file: EVALB's figures over its valid sentences and the strict F1."""
    cutoff = scored[0].result.cutoff
    rows = []
    for k, s in enumerate(scored):
        a, c = s.result.all.figures(), s.result.cut.figures()
        rows.append(
            f'<tr data-test="{k}"><th scope="row">{_e(s.name)}</th>'
            f'<td class="f1">{_pct(a["fmeasure"])}</td>'
            f'<td class="strict-f1">{_pct(a["strict_fmeasure"])}</td>'
            f'<td class="recall">{_pct(a["recall"])}</td>'
            f'<td class="precision">{_pct(a["precision"])}</td>'
            f'<td class="f1-cut">{_pct(c["fmeasure"])}</td>'
            f'<td class="scored">{a["valid_sentences"]}</td>'
            f'<td class="not-scored">{a["not_scored"]}</td></tr>'
        )
    return (
        '<section id="f1"><h2>F1</h2><table class="f1-table">'
        "<thead><tr><th>parses</th><th>F1</th><th>strict F1</th><th>recall</th>"
        f"<th>precision</th><th>F1 (len ≤ {cutoff})</th><th>scored</th>"
        "<th>not scored</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        '<p class="note">F1, recall and precision are EVALB\'s, over the sentences it '
        "scores; the strict F1 counts every sentence it does not score (failed parse, "
        "different words, bad brackets, no parse line) as all wrong.</p></section>"
    )


def _kinds_table(scored: Sequence[ScoredParses]) -> str:
    """Kinds x parse files: brackets and repairs, each cell a link to those sentences."""
    totals = [s.errors.totals() for s in scored]
    head = "".join(f'<th colspan="2" scope="colgroup">{_e(s.name)}</th>' for s in scored)
    sub = "<th>brackets</th><th>repairs</th>" * len(scored)
    rows = []
    for kind in KINDS:
        cells = []
        for k, t in enumerate(totals):
            repairs, brackets = t[kind]
            link = f"#test={k}&amp;kind={quote(kind, safe='')}"
            cells.append(
                f'<td class="brackets" data-test="{k}"><a href="{link}">{brackets}</a></td>'
                f'<td class="repairs" data-test="{k}">{repairs}</td>'
            )
        rows.append(
            f'<tr data-kind="{_e(kind)}"><th scope="row">{_e(kind)}</th>{"".join(cells)}</tr>'
        )
    total = "".join(
        f'<td class="brackets" data-test="{k}">{s.errors.brackets}</td>'
        f'<td class="repairs" data-test="{k}">{sum(r for r, _ in t.values())}</td>'
        for k, (s, t) in enumerate(zip(scored, totals, strict=True))
    )
    evalb = "".join(
        f'<td class="brackets" data-test="{k}">{s.brackets_wrong()}</td><td></td>'
        for k, s in enumerate(scored)
    )
    return (
        '<section id="kinds"><h2>Errors by kind</h2><table class="kinds">'
        f'<thead><tr><th rowspan="2">kind</th>{head}</tr><tr>{sub}</tr></thead><tbody>'
        + "".join(rows)
        + f'<tr class="total"><th scope="row">total</th>{total}</tr>'
        + f'<tr class="evalb"><th scope="row">EVALB: (gold − matched) + (test − matched)</th>'
        f"{evalb}</tr></tbody></table>"
        '<p class="note">Errors by kind (Kummerfeld et al. 2012): the repairs that turn a '
        "parse into its gold tree, on EVALB's brackets over the sentences it scores; a "
        "repair fixes one or more wrong brackets. A number links to its sentences.</p>"
        "</section>"
    )


def _controls(scored: Sequence[ScoredParses]) -> str:
    tests = "".join(f'<option value="{k}">{_e(s.name)}</option>' for k, s in enumerate(scored))
    kinds = "".join(f'<option value="{_e(k)}">{_e(k)}</option>' for k in KINDS)
    return (
        '<nav id="filters"><h2>Sentences</h2><form onsubmit="return false">'
        f'<label>parses <select id="f-test">{tests}'
        '<option value="all">all parses</option></select></label> '
        '<label>errors <select id="f-kind"><option value="">any sentence</option>'
        '<option value="errors">with errors</option><option value="none">no errors</option>'
        f'<option value="unscored">not scored</option>{kinds}</select></label> '
        '<label>length <input id="f-min" type="number" min="0" placeholder="min"></label>'
        '<label> to <input id="f-max" type="number" min="0" placeholder="max"></label> '
        '<label>words <input id="f-q" type="search" placeholder="search words"></label> '
        '<button type="button" id="f-reset">reset</button></form>'
        '<p id="shown" aria-live="polite"></p>'
        '<p class="legend">Marked: <span class="extra-key">extra</span> brackets the '
        'parse has and the gold tree lacks (on the parse), <span class="missing-key">'
        "missing</span> gold brackets the selected parse lacks (on the gold tree).</p></nav>"
    )


def _card(
    i: int,
    gold_line: str,
    scored: Sequence[ScoredParses],
    messages: Sequence[dict[int, list[str]]],
    max_depth: int | None,
) -> str:
    """The section of gold sentence ``i`` (0-based): words, gold tree, each parse."""
    sentences = [s.errors.sentences[i] for s in scored]
    kept = sentences[0].words  # what repairs' spans count
    gold = _read(gold_line)
    words_text = " ".join(words(gold)) if gold is not None else gold_line
    attrs = [f'id="s{i + 1}"', f'data-id="{i + 1}"', f'data-length="{sentences[0].length}"']
    missing: dict[int, list[str]] = {}
    for k, errors in enumerate(sentences):
        kinds = sorted(set(r.kind for r in errors.repairs), key=KINDS.index)
        attrs.append(f'data-kinds-{k}="{_e("|".join(kinds))}"')
        attrs.append(f'data-status-{k}="{_status(scored[k], i)}"')
        for b in errors.missing:
            missing.setdefault(b, []).append(f"missing-{k}")
    gold_marks = _marks(gold, {b: " ".join(c) for b, c in missing.items()})
    body = [
        f'<section class="sentence" {" ".join(attrs)}>',
        f'<h3><a href="#s{i + 1}" class="n">#{i + 1}</a> '
        f'<span class="len">{sentences[0].length} words</span></h3>',
        f'<p class="words">{_e(words_text)}</p>',
        '<div class="trees"><div class="tree gold"><h4>gold</h4>',
        _drawing(gold, gold_line, gold_marks, max_depth, f"gold tree of sentence {i + 1}"),
        "</div>",
    ]
    for k, s in enumerate(scored):
        said = messages[k].get(i + 1, [])
        body.append(_parse_block(k, i, s, sentences[k], said, kept, max_depth))
    body.append("</div></section>")
    return "\n".join(body)


def _status(s: ScoredParses, i: int) -> str:
    if i >= len(s.result.sentences):
        return "missing"
    return s.result.sentences[i].status.name.lower()


def _marks(tree: Tree | None, by_bracket: dict[int, str]) -> dict[tuple[int, ...], str]:
    """Marks by tree position from marks by bracket index (the order EVALB reads them)."""
    if tree is None or not by_bracket:
        return {}
    positions = phrase_positions(tree)
    return {positions[b]: c for b, c in by_bracket.items() if b < len(positions)}


def _drawing(
    tree: Tree | None,
    line: str | None,
    marks: dict[tuple[int, ...], str],
    max_depth: int | None,
    title: str,
) -> str:
    """The tree drawn, or why not (with its line)."""
    if tree is not None:
        try:
            return tree_svg(tree, marks=marks, max_depth=max_depth, title=title, standalone=False)
        except (ParameterError, RecursionError):  # deeper than nltk's layout goes
            why = "tree too deep to draw: collapse it (max_depth, lpcfg report --max-depth)"
    elif line is None:
        return '<p class="why">no parse line</p>'
    elif line.strip() in ("", "()", "(())"):
        why = "no tree (failed parse)"
    else:
        why = "unreadable tree"
    return f'<p class="why">{why}:</p><pre class="line">{_e(line)}</pre>'


def _sentence_figures(result: SentenceResult) -> str:
    f1 = fmeasure(result.recall, result.precision)
    return (
        f'F1 <b class="sf1">{f1:.2f}</b> (recall {result.recall:.2f}, precision '
        f"{result.precision:.2f}; {result.matched} of {result.gold} gold and "
        f"{result.test} parse brackets match)"
    )


def _parse_block(
    k: int,
    i: int,
    s: ScoredParses,
    errors: SentenceErrors,
    messages: list[str],
    kept: list[str],
    max_depth: int | None,
) -> str:
    """Parse file ``k``'s part of sentence ``i``'s card: figures, repairs, tree."""
    line = s.lines[i] if i < len(s.lines) else None
    tree = _read(line)
    result = s.result.sentences[i] if i < len(s.result.sentences) else None
    if result is not None and result.status is Status.OK and errors.scored:
        figures = _sentence_figures(result)
        repairs = _repairs_table(errors, kept) if errors.repairs else "<p>no errors</p>"
    else:
        why = "no parse line" if result is None else result.status.name.lower()
        said = "; ".join(messages)
        figures = (
            f'<b class="unscored">not scored by EVALB</b> ({_e(why)}'
            f"{': ' + _e(said) if said else ''})"
        )
        repairs = ""
    marks = _marks(tree, {b: "extra" for b in errors.extra})
    drawing = _drawing(tree, line, marks, max_depth, f"{s.name}: sentence {i + 1}")
    return (
        f'<div class="tree parse" data-test="{k}"><h4>{_e(s.name)}</h4>'
        f'<p class="figures">{figures}</p>{repairs}{drawing}</div>'
    )


def _repairs_table(errors: SentenceErrors, kept: list[str]) -> str:
    """A parse's repairs of one sentence; a span is EVALB's, over the words it keeps
    (punctuation and traces left out), shown with those words."""
    rows = "".join(
        f'<tr data-kind="{_e(r.kind)}"><td>{_e(r.kind)}</td><td>{_e(r.operation)}</td>'
        f"<td>{_e(r.label)}</td><td>{r.start}–{r.end} <i>{_e(' '.join(kept[r.start : r.end]))}"
        f"</i></td><td>{r.fixed}</td>"
        f"<td>{_e(r.detail)}</td></tr>"
        for r in errors.repairs
    )
    return (
        '<table class="repairs"><thead><tr><th>kind</th><th>repair</th><th>label</th>'
        "<th>span</th><th>brackets</th><th>detail</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _test_style(n: int) -> str:
    """The CSS that shows parse ``k``'s block and the gold brackets it misses when it is
    the one selected (``<body data-test="k">``)."""
    rules = []
    for k in range(n):
        rules.append(
            f'body[data-test="{k}"] .parse:not([data-test="{k}"]){{display:none}}'
            f'body[data-test="{k}"] .lpcfg-tree .missing-{k}>text{{fill:#0b5cd5;font-weight:bold}}'
            f'body[data-test="{k}"] .lpcfg-tree path.missing-{k}{{stroke:#0b5cd5;stroke-width:2}}'
            f'body[data-test="{k}"] .lpcfg-tree path.roof.missing-{k}{{fill:#e6efff}}'
            f'body[data-test="{k}"] .f1-table tr[data-test="{k}"]{{background:#fff3c4}}'
        )
    return "\n".join(rules)


_STYLE = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 1.5em 3em;color:#222}
h1{font-size:1.5em;margin:.6em 0 .2em}h2{font-size:1.2em;margin:1.2em 0 .4em}
h3{font-size:1em;margin:0 0 .3em}h4{margin:.4em 0 .2em;font-size:.95em;color:#444}
table{border-collapse:collapse;margin:.3em 0}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
th[scope=row],thead th{text-align:left;background:#f4f4f4}
.note,.legend{color:#555;font-size:.9em;max-width:60em}
#filters{position:sticky;top:0;background:#fff;border-bottom:1px solid #ccc;padding:.3em 0;
z-index:1}
#filters h2{display:inline;margin-right:1em}#filters form{display:inline}
#filters input[type=number]{width:5em}
#shown{margin:.3em 0;font-weight:bold}
[hidden]{display:none!important}
section.sentence{border:1px solid #ddd;border-radius:6px;margin:1em 0;padding:.6em .8em}
.words{font-size:1.05em;margin:.2em 0 .5em}
.len{color:#666;font-weight:normal}
.trees{display:flex;flex-wrap:wrap;gap:1em}
.tree{overflow-x:auto;max-width:100%}
.tree svg{display:block}
table.repairs{font-size:.85em}table.repairs td{text-align:left}
.unscored{color:#b00}
.why{color:#b00;margin:.2em 0}
pre.line{white-space:pre-wrap;font-size:.85em;background:#f8f8f8;padding:.3em}
.extra-key{color:#c8102e;font-weight:bold}.missing-key{color:#0b5cd5;font-weight:bold}
body:not([data-test=all]) .parse{flex:1 1 100%}
"""

_SCRIPT = """
(function () {
  "use strict";
  const cards = Array.from(document.querySelectorAll("section.sentence"));
  const words = cards.map((c) => " " + c.querySelector(".words").textContent.toLowerCase() + " ");
  const ntests = document.querySelectorAll("#f-test option").length - 1;
  const el = (id) => document.getElementById(id);
  const fields = {test: el("f-test"), kind: el("f-kind"), min: el("f-min"), max: el("f-max"),
                  q: el("f-q")};
  function read() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    const st = {test: p.get("test") || "0", kind: p.get("kind") || "", min: p.get("min") || "",
                max: p.get("max") || "", q: p.get("q") || ""};
    if (st.test !== "all" && !(Number(st.test) >= 0 && Number(st.test) < ntests)) st.test = "0";
    return st;
  }
  function write() {
    const p = new URLSearchParams();
    for (const [k, f] of Object.entries(fields)) {
      const v = f.value.trim();
      if (v && !(k === "test" && v === "0")) p.set(k, v);
    }
    const hash = p.toString().replace(/\\+/g, "%20");
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    apply(read());
  }
  function matches(card, tests, st) {
    const n = Number(card.dataset.length);
    if (st.min !== "" && n < Number(st.min)) return false;
    if (st.max !== "" && n > Number(st.max)) return false;
    if (!st.kind) return true;
    return tests.some((k) => {
      const status = card.getAttribute("data-status-" + k);
      const kinds = card.getAttribute("data-kinds-" + k);
      if (st.kind === "unscored") return status !== "ok";
      if (status !== "ok") return false;
      if (st.kind === "errors") return kinds !== "";
      if (st.kind === "none") return kinds === "";
      return kinds.split("|").includes(st.kind);
    });
  }
  function apply(st) {
    for (const [k, f] of Object.entries(fields)) if (document.activeElement !== f) f.value = st[k];
    if (fields.kind.value !== st.kind) fields.kind.value = "";
    document.body.dataset.test = st.test;
    const tests = st.test === "all" ? [...Array(ntests).keys()] : [Number(st.test)];
    const terms = st.q.toLowerCase().split(/\\s+/).filter((t) => t);
    let shown = 0;
    cards.forEach((card, i) => {
      const ok = matches(card, tests, st) && terms.every((t) => words[i].includes(t));
      card.hidden = !ok;
      shown += ok;
    });
    el("shown").textContent = shown + " of " + cards.length + " sentences shown";
  }
  for (const f of Object.values(fields)) f.addEventListener("input", write);
  el("f-reset").addEventListener("click", () => {
    for (const f of Object.values(fields)) f.value = "";
    fields.test.value = "0";
    write();
  });
  window.addEventListener("hashchange", () => apply(read()));
  apply(read());
})();
"""
