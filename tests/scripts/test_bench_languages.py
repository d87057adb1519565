"""scripts/prepare_languages.py and scripts/bench_languages.py: the split folder's files, the
parts of the bench (fallback counts, the Berkeley parser's trees, the table) and planted runs
on a tiny treebank, with a stand-in for ``java`` first on PATH (the Berkeley parser's trainer
takes minutes; the stand-in writes six cycles' grammars and parses with them, the third
cycle best)."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from lpcfg_cli.treebank.nltk_samples import TREEBANKS, Reading, Split
from lpcfg_cli.treebank.ptb import format_tree, parse_tree, read_trees
from tests.support import SCRIPTS, latent_trees, load_script


@pytest.fixture
def prepare(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    return load_script("prepare_languages")


@pytest.fixture
def bench(monkeypatch, prepare):
    return load_script("bench_languages")


def planted_split(n_train: int = 40, n_eval: int = 12) -> Split:
    """A split of trees sampled from a small L-PCFG, function tags on some labels (so that
    normalisation has work to do), under sinica's name."""
    trees = latent_trees(n_train + 2 * n_eval)
    for tree in trees:
        tree.set_label(tree.label() + "-SUBJ")
    parts = {
        "train": trees[:n_train],
        "dev": trees[n_train : n_train + n_eval],
        "test": trees[n_train + n_eval :],
    }
    reading = Reading(treebank=TREEBANKS["sinica"], trees=trees, positions=[], total=len(trees))
    positions = {part: list(range(len(v))) for part, v in parts.items()}
    return Split(parts=parts, positions=positions, reading=reading)


def test_a_split_folder_holds_the_gold_the_words_and_the_berkeley_trees(prepare, tmp_path):
    data = planted_split()
    prepare.write_split(data, tmp_path / "sinica", {"planted": True})
    folder = tmp_path / "sinica"
    assert prepare.folder_source(folder) == prepare.source_line(data)
    assert "every 3rd usable tree" in prepare.source_line(data)
    gold = (folder / "dev.mrg").read_text().splitlines()
    assert gold[0] == format_tree(data.parts["dev"][0], root="TOP")  # labels as written
    assert "-SUBJ" in gold[0]
    words = (folder / "dev.txt").read_text().splitlines()
    assert words[0].split() == data.parts["dev"][0].leaves()
    root = (folder / "train.root.mrg").read_text().splitlines()
    assert len(root) == 40 and all(line.startswith("(ROOT (") for line in root)
    assert "-SUBJ" not in root[0]  # as lpcfg normalises them: function tags cut
    assert json.loads((folder / "audit.json").read_text()) == {"planted": True}
    (folder / "test.txt").unlink()
    assert prepare.folder_source(folder) is None  # incomplete: not vouched for


def test_a_word_beside_phrases_gets_a_pre_terminal_for_the_berkeley_trainer(prepare, tmp_path):
    data = planted_split()
    mixed = parse_tree("(S (NP (D o) (N mercado)) (NP todo (N tipo)) (V fica))")
    data.parts["train"][0] = mixed
    prepare.write_split(data, tmp_path / "x")
    root = (tmp_path / "x" / "train.root.mrg").read_text().splitlines()
    assert root[0] == "(ROOT (S (NP (D o) (N mercado)) (NP (%w todo) (N tipo)) (V fica)))"
    assert format_tree(mixed) == "(S (NP (D o) (N mercado)) (NP todo (N tipo)) (V fica))"
    train = (tmp_path / "x" / "train.mrg").read_text().splitlines()
    assert "(NP todo (N tipo))" in train[0]  # the gold as written


def test_the_audit_counts_what_bears_on_parsing(prepare):
    data = planted_split()
    star = data.parts["dev"][0]
    star.append(type(star)("sn.e", ["*0*"]))
    figures = prepare.audit(data)
    assert figures["parts"]["dev"]["empty_element_words"] == 1
    assert figures["labels"]["cut_by_normalisation"] == len(
        {t.label() for p in data.parts.values() for t in p}
    )
    assert figures["roots"] and 0 < figures["root_share_of_dev_brackets"]["share"] < 1
    assert "out_of_sentence_order" not in figures
    assert "empty-element words" in prepare.summary(figures)


def test_fallbacks_are_read_from_the_parse_summary(bench):
    line = (
        "lpcfg: parsed 300 sentences from dev.txt in 0.4 s (696.1 sentences/s), 11 fallback "
        "(9 no parse under the coarse grammar: lines 12, 21, 40; 2 longer than 660 words: "
        "lines 7, 9), 3 retried with looser pruning\n"
    )
    assert bench.fallbacks(line) == (
        11,
        {"no parse under the coarse grammar": 9, "longer than 660 words": 2},
    )
    assert (
        bench.fallbacks("lpcfg: parsed 3 sentences from - in 0.1 s (3 sentences/s), 0 fallback")[0]
        == 0
    )
    one = "... 1 fallback (1 no parse under the latent model: tree on line 4)"
    assert bench.fallbacks(one) == (1, {"no parse under the latent model": 1})


def test_the_berkeley_parsers_trees_are_written_as_lpcfg_writes_them(bench):
    assert bench.as_top("( (S (NP (D a)) (V b)) )") == "(TOP (S (NP (D a)) (V b)) )"
    assert bench.as_top("(())") == "()" and bench.as_top("( ( ) )") == "()"
    assert bench.as_top("") == "()"


def record(dev, test, falls=(0, 0), **extra):
    return {"status": "ok", "dev_f1": dev, "test_f1": test, "dev_fallbacks": falls[0],
            "test_fallbacks": falls[1], **extra}  # fmt: skip


def test_the_table_has_a_row_per_model_and_a_column_pair_per_treebank(bench):
    data = {
        "runs": {
            "alpino": {"models": {
                "pcfg": record(70.0, 69.0, (1, 2)),
                "splitmerge-s0": record(80.0, 78.0), "splitmerge-s1": record(82.0, 80.0, (0, 1)),
                "berkeley": record(81.0, 79.5, (0, 1), chosen_cycle=4,
                                   last_cycle=record(80.5, 79.0, (2, 0))),
            }},
            "sinica": {"models": {
                "pcfg": record(63.35, 60.0),
                "berkeley": {"status": "failed", "stage": "train", "stderr": "OutOfMemoryError"},
            }},
        }
    }  # fmt: skip
    text = bench.markdown(data, ["alpino", "sinica"], [0, 1])
    lines = {line.split("|")[1].strip(): line for line in text.splitlines() if "|" in line}
    head = text.splitlines()[0]
    assert "alpino dev | alpino test | sinica dev | sinica test" in head
    assert "fallbacks (alpino, sinica)" in head
    pcfg = lines[bench.LABEL["pcfg"]]
    assert "| 70.00 | 69.00 | 63.35 | 60.00 | 3 / 0 |" in pcfg
    mean = lines[f"{bench.LABEL['splitmerge']}, mean ± sd"]
    assert "81.00 ± 1.41 | 79.00 ± 1.41" in mean
    assert "| 78.00 |" in lines[f"{bench.LABEL['splitmerge']}, seed 0"]
    assert "failed (train)" in lines[bench.LABEL["berkeley"]]
    assert "| 80.50 | 79.00 |" in lines[bench.LABEL["berkeley6"]]
    assert bench.LABEL["em"] not in lines and bench.LABEL["product"] not in lines
    assert "Berkeley cycles chosen on dev: alpino 4." in text


# --- planted runs -------------------------------------------------------------------------

FAKE_JAVA = """\
#!{python}
# A stand-in for `java` running the Berkeley parser: its trainer writes GRAMMAR_K_*.gr for
# six cycles (the file holds K) and GRAMMAR; its parser writes, for each line of the input,
# the gold tree (the .mrg beside the input) in the parser's "( (S ...) )" form: cycle 3 all
# of them, cycle 2 every second one, cycle 6 all but the first ("(())"), the others flat
# trees. Each call is logged.
import os, re, sys
from pathlib import Path

args = sys.argv[1:]
with open(os.environ["FAKE_JAVA_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if args == ["-version"]:
    sys.exit(sys.stderr.write('openjdk version "17" (stand-in)\\n') and 0)
if "edu.berkeley.nlp.PCFGLA.GrammarTrainer" in args:
    if os.environ.get("FAKE_JAVA_FAIL") == "train":
        sys.stderr.write('Exception in thread "main" java.lang.OutOfMemoryError: planted\\n')
        sys.exit(1)
    out = args[args.index("-out") + 1]
    for k in range(1, 7):
        for phase in ("splitting", "merging", "smoothing"):
            Path(f"{{out}}_{{k}}_{{phase}}.gr").write_text(str(k))
    Path(out).write_text("6")
    print("Saving grammar to", out)
    sys.exit(0)
cycle = int(Path(args[args.index("-gr") + 1]).read_text())
if os.environ.get("FAKE_JAVA_FAIL") == f"parse{{cycle}}":
    sys.exit(sys.stderr.write("java.lang.Error: planted parse failure\\n") and 1)
words = Path(args[args.index("-inputFile") + 1])
gold = words.with_suffix(".mrg").read_text().splitlines()
out = []
for i, (line, tree) in enumerate(zip(words.read_text().splitlines(), gold)):
    if cycle == 3 or (cycle == 6 and i > 0) or (cycle == 2 and i % 2):
        out.append(re.sub(r"^\\(TOP ", "( ", tree))
    elif cycle == 6:
        out.append("(())")
    else:
        out.append("( (X " + " ".join(f"(T {{w}})" for w in line.split()) + ") )")
Path(args[args.index("-outputFile") + 1]).write_text("\\n".join(out) + "\\n")
"""


@pytest.fixture
def planted(prepare, tmp_path, monkeypatch):
    """A planted split under sinica's name, a Berkeley folder with a jar, ``java`` standing
    in for the real one; the bench's arguments for them."""
    prepare.write_split(planted_split(), tmp_path / "data" / "sinica")
    bin_dir, berkeley = tmp_path / "bin", tmp_path / "berkeley"
    bin_dir.mkdir()
    berkeley.mkdir()
    (berkeley / "BerkeleyParser-1.7.jar").write_text("")
    java = bin_dir / "java"
    java.write_text(textwrap.dedent(FAKE_JAVA.format(python=sys.executable)))
    java.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_JAVA_LOG", str(tmp_path / "java.log"))
    monkeypatch.delenv("FAKE_JAVA_FAIL", raising=False)
    args = ["--treebanks", "sinica", "--data", str(tmp_path / "data"),
            "--out", str(tmp_path / "out"), "--json", str(tmp_path / "languages.json"),
            "--berkeley", str(berkeley), "--jobs", "1"]  # fmt: skip
    return args


def saved_models(tmp_path) -> dict:
    """The records of the planted treebank's models in the bench's JSON."""
    return json.loads((tmp_path / "languages.json").read_text())["runs"]["sinica"]["models"]


def java_calls(tmp_path) -> list[str]:
    log = tmp_path / "java.log"
    return log.read_text().splitlines() if log.exists() else []


def test_the_berkeley_cycle_is_chosen_on_dev_and_a_rerun_resumes(bench, planted, tmp_path, capsys):
    assert bench.main([*planted, "--only", "berkeley"]) == 0
    saved = json.loads((tmp_path / "languages.json").read_text())
    run = saved["runs"]["sinica"]
    assert run["source"].startswith("nltk sinica_treebank")
    b = run["models"]["berkeley"]
    assert b["status"] == "ok" and b["chosen_cycle"] == 3
    assert b["dev_f1"] == b["test_f1"] == 100.0 and b["dev_fallbacks"] == 0
    # Dev is parsed until a cycle does not improve (patience 1, as lpcfg's split-merge):
    # cycles 1-4, and only the chosen cycle parses test; the sixth is never reached.
    by_cycle = {k: r["f1"] for k, r in b["dev_by_cycle"].items()}
    assert sorted(by_cycle) == ["1", "2", "3", "4"]
    assert by_cycle["1"] < by_cycle["2"] < by_cycle["3"] and by_cycle["4"] < by_cycle["3"]
    assert sorted(b["test_by_cycle"]) == ["3"] and "last_cycle" not in b
    assert "GrammarTrainer" in b["commands"]["train"] and "train.root.mrg" in b["commands"]["train"]
    assert b["train_seconds"] > 0 and b["commit"] == saved["commit"]["commit"]
    trainer_calls = [c for c in java_calls(tmp_path) if "GrammarTrainer" in c]
    assert len(trainer_calls) == 1 and len(java_calls(tmp_path)) == 1 + 4 + 1 + 1  # + -version
    out = capsys.readouterr().out
    assert "| the Berkeley parser, cycle chosen on dev | 100.00 | 100.00 | 0 |" in out
    assert "Berkeley cycles chosen on dev: sinica 3." in out
    # Run again: nothing is trained or parsed, the record stays as it was.
    calls = len(java_calls(tmp_path))
    assert bench.main([*planted, "--only", "berkeley"]) == 0
    assert len(java_calls(tmp_path)) == calls + 1  # -version only
    again = json.loads((tmp_path / "languages.json").read_text())
    assert again["runs"]["sinica"]["models"]["berkeley"] == b
    # With the record gone (a run stopped while it parsed), the parses done are kept too.
    del again["runs"]["sinica"]["models"]["berkeley"]
    (tmp_path / "languages.json").write_text(json.dumps(again))
    assert bench.main([*planted, "--only", "berkeley"]) == 0
    assert len(java_calls(tmp_path)) == calls + 2  # -version twice, no parse
    resumed = saved_models(tmp_path)["berkeley"]
    assert resumed["dev_by_cycle"] == b["dev_by_cycle"] and resumed["test_f1"] == b["test_f1"]
    # A different --limit would mix figures of different data: refused.
    with pytest.raises(SystemExit, match="--limit"):
        bench.main([*planted, "--only", "berkeley", "--limit", "5"])


def test_a_failing_berkeley_trainer_is_recorded_and_the_run_goes_on(
    bench, planted, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("FAKE_JAVA_FAIL", "train")
    assert bench.main([*planted, "--only", "berkeley,pcfg"]) == 0
    models = saved_models(tmp_path)
    failed = models["berkeley"]
    assert failed["status"] == "failed" and failed["stage"] == "train"
    assert failed["returncode"] == 1 and "OutOfMemoryError: planted" in failed["stderr"]
    pcfg = models["pcfg"]  # the run went on
    assert pcfg["status"] == "ok" and 0 < pcfg["dev_f1"] <= 100 and 0 < pcfg["test_f1"] <= 100
    assert pcfg["dev_fallbacks"] >= 0 and "wrote" in pcfg["train_summary"]
    assert pcfg["commands"]["train"].startswith("lpcfg train --config configs/standard.toml")
    assert "--seed 0" in pcfg["commands"]["train"] and "--jobs 1" in pcfg["commands"]["parse_dev"]
    out = capsys.readouterr().out
    assert "failed (train)" in out and bench.LABEL["pcfg"] in out


def test_a_failing_berkeley_parse_leaves_that_cycle_out(bench, planted, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_JAVA_FAIL", "parse3")
    assert bench.main([*planted, "--only", "berkeley"]) == 0
    b = json.loads((tmp_path / "languages.json").read_text())["runs"]["sinica"]["models"][
        "berkeley"
    ]
    assert b["dev_by_cycle"]["3"]["status"] == "failed"
    assert "planted parse failure" in b["dev_by_cycle"]["3"]["stderr"]
    assert b["status"] == "ok" and b["chosen_cycle"] == 2  # the best of those that parsed
    # The record stays until --redo runs that model again (cycle 3 parses now).
    monkeypatch.delenv("FAKE_JAVA_FAIL")
    assert bench.main([*planted, "--only", "berkeley"]) == 0
    assert saved_models(tmp_path)["berkeley"] == b
    assert bench.main([*planted, "--only", "berkeley", "--redo", "berkeley"]) == 0
    assert saved_models(tmp_path)["berkeley"]["chosen_cycle"] == 3


def test_the_berkeley_rows_need_the_jar(bench, planted, tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench.main([a if a != str(tmp_path / "berkeley") else str(tmp_path) for a in planted])
    assert "--berkeley DIR" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main([*planted, "--only", "pcfg,tree-lstm"])


@pytest.mark.slow
def test_every_lpcfg_model_runs_with_its_shipped_config(bench, planted, tmp_path, capsys):
    """The planted treebank, every model and two split-merge seeds (about half a
    minute)."""
    assert bench.main([*planted, "--seeds", "0,1"]) == 0
    models = saved_models(tmp_path)
    assert sorted(models) == ["berkeley", "em", "pcfg", "product", "splitmerge-s0",
                              "splitmerge-s1"]  # fmt: skip
    for key, r in models.items():
        assert r["status"] == "ok" and 0 < r["dev_f1"] <= 100, (key, r)
    assert "--dev" in models["em"]["commands"]["train"]
    assert "--seed 1" in models["splitmerge-s1"]["commands"]["train"]
    assert "configs/best.toml" in models["product"]["commands"]["train"]
    out = capsys.readouterr().out
    assert f"{bench.LABEL['splitmerge']}, mean ± sd" in out


@pytest.mark.slow
def test_a_limited_run_on_the_real_sinica_split(bench, tmp_path):
    """From nltk's data (skipped without it): the split folder is prepared, and --limit
    takes the first trees of each part."""
    from lpcfg_cli.errors import LpcfgError
    from lpcfg_cli.treebank.nltk_samples import read

    try:
        read("sinica")
    except LpcfgError as err:
        pytest.skip(f"nltk's sinica_treebank corpus not available: {err}")
    args = ["--treebanks", "sinica", "--only", "pcfg", "--limit", "30", "--jobs", "1",
            "--data", str(tmp_path / "data"), "--out", str(tmp_path / "out"),
            "--json", str(tmp_path / "l.json")]  # fmt: skip
    assert bench.main(args) == 0
    assert len(read_trees(tmp_path / "data" / "sinica" / "train.mrg")) == 2000
    saved = json.loads((tmp_path / "l.json").read_text())
    assert saved["limit"] == 30 and saved["runs"]["sinica"]["models"]["pcfg"]["status"] == "ok"
    assert "limit30" in saved["runs"]["sinica"]["models"]["pcfg"]["commands"]["train"]
