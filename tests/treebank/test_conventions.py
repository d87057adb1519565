"""Treebank conventions (``treebank.conventions``): each preset on a small planted treebank of
its kind, the rules as options, the model's record of them, and `parse` and `evaluate`
reading with them; the Penn Treebank's normal form is unchanged."""

from __future__ import annotations

import json
import re

import pytest

import lpcfg_cli as lp
from lpcfg_cli.errors import ParameterError
from lpcfg_cli.treebank.conventions import PRESETS, PTB, Conventions, conventions
from lpcfg_cli.treebank.normalize import normalize
from tests.support import TINY_TREES, invoke, one_error

# Penn-Helsinki token trees (IcePaHC style): an ID node beside each tree, a CODE node,
# word-lemma tokens, empty elements as words (*T*-1, *pro*, the null complementizer 0).
PSD = """\
( (IP-MAT (NP-SBJ (PRO-N Hann-hann)) (NP-OB1 *T*-1) (CODE <P_5>) (VBDI kom-koma)
          (PP (P til-til) (NP (N-G bæjar-bær))) (. .-.))
  (ID 1150.FIRST.SCI,.1))

( (IP-MAT (NP-SBJ (N-N Konungur-konungur)) (VBDI sá-sjá) (NP-OB1 (PRO-A hann-hann))
          (CP-ADV (C 0) (WNP-1 0)) (. .-.))
  (ID 1150.FIRST.SCI,.2))

( (IP-MAT (NP-SBJ *pro*) (VBDI kom-koma) (PP (P til-til) (NP (N-G Konungur-konungur)))
          (. .-.))
  (ID 1150.FIRST.SCI,.3))
"""

FLORESTA = """\
(STA+fcl (SUBJ+np (>N+art O) (H+n gato)) (P+v-fin dorme) (.+pu .))
(STA+fcl (SUBJ+np (>N+art A) (H+n casa)) (P+v-fin cai) (.+pu .))
"""

SPMRL = "(S (NP##gen=m##-SBJ (NN##gen=m|num=s## gato)) (VP##x## (VV##p=3## dorme)))\n"


def one(text: str, name: str) -> str:
    (tree,) = lp.trees_from_text(text)
    return lp.format_tree(normalize(tree, PRESETS[name]))


def test_each_preset_on_a_tree_of_its_kind():
    first = PSD.split("\n\n")[0]
    assert one(first, "penn-historical") == (
        "(IP (NP (PRO Hann)) (VBDI kom) (PP (P til) (NP (N bæjar))) (. .))"
    )
    assert one(first, "ptb").startswith("( (IP (NP (PRO Hann-hann)) (NP *T*-1) (CODE <P_5>)")
    assert one(FLORESTA.splitlines()[0], "function-category") == (
        "(fcl (np (art O) (n gato)) (v-fin dorme) (pu .))"
    )
    assert one(SPMRL, "spmrl") == "(S (NP (NN gato)) (VP (VV dorme)))"
    raw = "(S-1 (NP-SBJ (-NONE- *)) (NP=2 (NN x)))"
    assert one(raw, "none") == raw
    assert one(raw, "ptb") == "(S (NP (NN x)))"


def test_the_penn_treebank_normal_form_is_unchanged(tmp_path):
    """The default conventions are exactly the old normal form: -NONE- subtrees removed,
    labels cut at the first '-' or '=' unless they start with one (-LRB-)."""
    tree = "(S (NP-SBJ-1 (-NONE- *T*-1)) (-LRB- -LRB-) (PP-LOC=2 (IN in) (NP (NN x))) (. .))"
    assert one(tree, "ptb") == "(S (-LRB- -LRB-) (PP (IN in) (NP (NN x))) (. .))"
    assert conventions() == PTB and PTB.label("-NONE-") == "-NONE-"


def test_rules_are_options_and_a_preset_is_a_set_of_them():
    custom = conventions("ptb", drop_labels="ID,CODE", lemma="-")
    assert custom.name == "custom" and custom.drop_labels == ("ID", "CODE")
    assert custom.word("kom-koma") == "kom" and custom.word("-") == "-"
    assert conventions("penn-historical", lemma=None) == PRESETS["penn-historical"]
    assert Conventions.from_dict(custom.to_dict()) == custom
    with pytest.raises(ParameterError, match="conventions must be one of"):
        conventions("penn")
    with pytest.raises(ParameterError, match="empty is not a regular expression"):
        Conventions(empty="(")
    with pytest.raises(ParameterError, match="keep must be one of first, last"):
        Conventions(keep="middle")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("conventions")
    (d / "psd").mkdir()
    (d / "psd" / "a.psd").write_text(PSD, encoding="utf-8")
    (d / "psd" / "notes.txt").write_text("not a treebank file\n")
    (d / "floresta.mrg").write_text(FLORESTA, encoding="utf-8")
    return d


def test_a_penn_helsinki_folder_trains_parses_and_scores(corpus, tmp_path):
    model = tmp_path / "m.npz"
    res = invoke("train", "--conventions", "penn-historical", corpus / "psd", "-o", model)
    assert res.exit_code == 0, res.stderr
    assert lp.load_model(model).conventions == PRESETS["penn-historical"]
    # parse reads the treebank's own tokens: no lemma, no empty element comes back
    text = (
        "Hann-hann kom-koma til-til bæjar-bær .-.\n*pro* kom-koma til-til Konungur-konungur .-.\n"
    )
    res = invoke("parse", model, "-", stdin=text)
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "(TOP (IP (NP (PRO Hann)) (VBDI kom) (PP (P til) (NP (N bæjar))) (. .)))"
    assert len(lines) == 2 and not re.search(r"-\w|\*|\b0\b", res.stdout), res.stdout
    # binarize shows the normalised trees
    res = invoke("binarize", "--normalized", "--conventions", "penn-historical", corpus / "psd")
    assert res.exit_code == 0 and res.stdout.splitlines()[2] == (
        "(IP (VBDI kom) (PP (P til) (NP (N Konungur))) (. .))"
    )


def test_parse_refuses_other_conventions_than_the_models(corpus, tmp_path):
    model = tmp_path / "m.npz"
    assert (
        invoke("train", "--conventions", "penn-historical", corpus / "psd", "-o", model).exit_code
        == 0
    )
    one_error(
        invoke("parse", "--conventions", "ptb", model, "-", stdin="a\n"),
        "--conventions ptb: MODEL was trained with conventions penn-historical",
    )
    res = invoke("parse", "--conventions", "penn-historical", model, "-", stdin="kom-koma\n")
    assert res.exit_code == 0, res.stderr


def test_evaluate_applies_the_conventions_to_gold_and_test(corpus, tmp_path):
    gold = corpus / "psd" / "a.psd"
    # a parser fed the treebank's tokens (lemmas, empty elements) and lpcfg's words alike
    raw = tmp_path / "raw.mrg"
    raw.write_text(PSD, encoding="utf-8")
    clean = tmp_path / "clean.mrg"
    clean.write_text(
        "\n".join(
            lp.format_tree(normalize(t, PRESETS["penn-historical"]))
            for t in lp.read_trees(str(gold))
        )
        + "\n",
        encoding="utf-8",
    )
    for test in (raw, clean):
        res = invoke("evaluate", "--json", "--conventions", "penn-historical", gold, test)
        assert res.exit_code == 0, res.stderr
        assert res.stderr == "lpcfg: scored with conventions penn-historical\n"
        out = json.loads(res.stdout)
        assert out["all"]["strict_fmeasure"] == 100.0, test
        assert out["conventions"]["name"] == "penn-historical"


def test_floresta_scores_on_categories_or_on_the_pairs(corpus, tmp_path):
    bank = corpus / "floresta.mrg"
    model = tmp_path / "m.npz"
    res = invoke("train", "--conventions", "function-category", bank, "-o", model)
    assert res.exit_code == 0, res.stderr
    res = invoke("parse", model, "-", stdin="O gato dorme .\n")
    assert res.stdout == "(TOP (fcl (np (art O) (n gato)) (v-fin dorme) (pu .)))\n", res.stdout
    parsed = tmp_path / "p.mrg"
    parsed.write_text(res.stdout + "()\n")
    res = invoke("evaluate", "--json", "--conventions", "function-category", bank, parsed)
    assert json.loads(res.stdout)["all"]["fmeasure"] == 100.0, res.stderr
    pairs = invoke("train", bank, "-o", tmp_path / "pairs.npz")
    assert pairs.exit_code == 0
    res = invoke("parse", tmp_path / "pairs.npz", "-", stdin="O gato dorme .\n")
    assert "SUBJ+np" in res.stdout


def test_conventions_and_rules_from_a_config_file(corpus, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'conventions = "ptb"\n[train]\ndrop-labels = "ID,CODE,-NONE-"\nlemma-separator = "-"\n'
    )
    model = tmp_path / "m.npz"
    res = invoke("train", "--config", cfg, corpus / "psd", "-o", model)
    assert res.exit_code == 0, res.stderr
    rules = lp.load_model(model).conventions
    assert rules.name == "custom" and rules.lemma == "-" and "ID" in rules.drop_labels
    one_error(
        invoke("train", "--keep-side", "middle", corpus / "psd", "-o", model),
        "Invalid value for '--keep-side'",
    )


def test_a_ptb_model_records_and_reads_the_default(tmp_path):
    bank = tmp_path / "t.mrg"
    bank.write_text("\n".join(TINY_TREES) + "\n")
    model = lp.train(str(bank))
    assert model.conventions == PTB
    assert model.meta["training"]["conventions"]["name"] == "ptb"


def test_score_reads_tokens_as_parse_does(corpus, tmp_path):
    model = tmp_path / "m.npz"
    assert (
        invoke("train", "--conventions", "penn-historical", corpus / "psd", "-o", model).exit_code
        == 0
    )
    res = invoke(
        "score", model, "-", stdin="Konungur-konungur sá-sjá hann-hann .-.\nKonungur sá hann .\n"
    )
    assert res.exit_code == 0, res.stderr
    first, second = res.stdout.splitlines()
    assert first == second and first != "-inf"
