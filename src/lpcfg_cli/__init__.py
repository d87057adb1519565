"""lpcfg: learn latent-variable PCFGs from treebanks and parse with them.

The public API. Train a model from a treebank file, parse token lists, evaluate::

    import lpcfg_cli as lp

    model = lp.train("train.mrg", method="pcfg")  # or "em", "spectral", "pivot+em"...
    trees = list(lp.parse(model, [["The", "cat", "sat", "."], ["Dogs", "bark", "."]]))
    # lp.parse("em16.npz", ...) takes a model file; lp.score(model, sentences) gives each
    # sentence's probability; lp.Parser(model, jobs=2) runs both and keeps statistics.
    print(lp.format_tree(trees[0]))              # (S (NP (DT The) (NN cat)) ...)
    print(lp.to_nltk(trees[0]))                  # an nltk.Tree
    result = lp.evaluate(lp.read_trees("gold.mrg"), trees)
    print(result.strict_f1)                      # result.all.figures(): every figure
    print(lp.tree_text(trees[0]))                # drawn (lp.tree_svg: as SVG)
    kinds = lp.classify_errors(gold_lines, test_lines)   # errors by kind, one tree per line

A learner of any method, with its options dataclass, and dev trees to select on::

    em = lp.learner("em", states=16, iterations=40)        # options by name, or:
    em = lp.learner(lp.EMOptions(states=16))
    data = lp.prepare(["train.mrg"], lp.binarization("em"))
    model = em.fit(data, dev=lp.read_dev_trees(["dev.mrg"]))
    lp.save_model(model, "em16.npz")
    model = lp.load_model("em16.npz")

nltk code parses with an lpcfg model as with any nltk parser (``NltkParser``: ``ParserI``).
Names are loaded when first used, so ``import lpcfg_cli`` costs nothing (nltk, numba and the
learners are imported only by what needs them).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Public name -> the module that defines it (loaded on first use, PEP 562).
_LAZY = {
    # errors
    "LpcfgError": "lpcfg_cli.errors",
    "ParameterError": "lpcfg_cli.errors",
    "ParameterTypeError": "lpcfg_cli.errors",
    # trees and treebanks
    "Tree": "lpcfg_cli.treebank.tree",
    "words": "lpcfg_cli.treebank.tree",
    "read_trees": "lpcfg_cli.treebank.ptb",
    "trees_from_text": "lpcfg_cli.treebank.ptb",
    "format_tree": "lpcfg_cli.treebank.ptb",
    "normalize": "lpcfg_cli.treebank.normalize",
    "Conventions": "lpcfg_cli.treebank.conventions",
    "conventions": "lpcfg_cli.treebank.conventions",
    "BinarizeOptions": "lpcfg_cli.treebank.binarize",
    "binarize": "lpcfg_cli.treebank.binarize",
    "debinarize": "lpcfg_cli.treebank.binarize",
    "to_nltk": "lpcfg_cli.treebank.nltk_trees",
    "from_nltk": "lpcfg_cli.treebank.nltk_trees",
    "read_sentences": "lpcfg_cli.treebank.sentences",
    # training data and dev data
    "TrainingData": "lpcfg_cli.grammar.training_data",
    "DataOptions": "lpcfg_cli.grammar.training_data",
    "prepare": "lpcfg_cli.grammar.training_data",
    "prepare_trees": "lpcfg_cli.grammar.training_data",
    "prepare_text": "lpcfg_cli.grammar.training_data",
    "DevTrees": "lpcfg_cli.grammar.heldout",
    "DevText": "lpcfg_cli.grammar.heldout",
    "read_dev_trees": "lpcfg_cli.parsing.dev_f1",
    # learners and their options
    "METHODS": "lpcfg_cli.learners.registry",
    "LM_METHODS": "lpcfg_cli.learners.registry",
    "learner": "lpcfg_cli.learners.registry",
    "product": "lpcfg_cli.learners.registry",
    "binarization": "lpcfg_cli.learners.registry",
    "train": "lpcfg_cli.learners.registry",
    "Progress": "lpcfg_cli.model.protocol",
    "PCFGOptions": "lpcfg_cli.latent_pcfg.pcfg",
    "EMOptions": "lpcfg_cli.latent_pcfg.em",
    "SplitMergeOptions": "lpcfg_cli.latent_pcfg.splitmerge",
    "SpectralOptions": "lpcfg_cli.latent_pcfg.spectral",
    "PivotOptions": "lpcfg_cli.latent_pcfg.pivot",
    "WCFGOptions": "lpcfg_cli.wcfg.wcfg_learners",
    "WCFGUnsupervisedOptions": "lpcfg_cli.wcfg.wcfg_learners",
    "StoppingOptions": "lpcfg_cli.learners.selection",
    "GridOptions": "lpcfg_cli.learners.selection",
    "SearchOptions": "lpcfg_cli.learners.statesearch",
    "EnsembleOptions": "lpcfg_cli.learners.ensemble",
    "KNOptions": "lpcfg_cli.lm.kneserney",
    "AggregateEMOptions": "lpcfg_cli.lm.aggregate",
    "AggregatePivotOptions": "lpcfg_cli.lm.aggregate",
    "AggregatePivotEMOptions": "lpcfg_cli.lm.aggregate",
    # models
    "LPCFG": "lpcfg_cli.model.lpcfg",
    "load_model": "lpcfg_cli.learners.registry",
    "save_model": "lpcfg_cli.learners.registry",
    # parsing
    "Parser": "lpcfg_cli.parsing.parser",
    "parse": "lpcfg_cli.parsing.parser",
    "score": "lpcfg_cli.parsing.parser",
    "ParseResult": "lpcfg_cli.parsing.tiers",
    "SentenceScore": "lpcfg_cli.parsing.parser",
    "ArrangedModel": "lpcfg_cli.parsing.arranged",
    "arrange": "lpcfg_cli.parsing.arranged_cache",
    "ParserOptions": "lpcfg_cli.parsing.parser_options",
    "NltkParser": "lpcfg_cli.parsing.nltk_parser",
    # evaluation
    "evaluate": "lpcfg_cli.treebank.evaluation",
    "EvalResult": "lpcfg_cli.evalb.run",
    "format_report": "lpcfg_cli.evalb.report",
    # looking at parses
    "classify_errors": "lpcfg_cli.analysis.error_kinds",
    "ErrorAnalysis": "lpcfg_cli.analysis.error_kinds",
    "format_kinds": "lpcfg_cli.analysis.error_kinds",
    "tree_svg": "lpcfg_cli.analysis.drawing",
    "tree_text": "lpcfg_cli.analysis.drawing",
    "html_report": "lpcfg_cli.analysis.html_report",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lpcfg_cli' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later uses skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
