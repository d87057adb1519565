"""One module per subcommand; each defines a click command named ``command``.

``SUBCOMMANDS`` names them: the command line imports a module only when its subcommand runs
(``cli.group.LpcfgGroup``), and ``--config`` files take a table for each (``config``).
``SHORT_HELP`` is each one's line in ``lpcfg --help``, kept here so that listing the
commands imports none of them (set on the command when it loads, so the two cannot differ).
"""

SUBCOMMANDS = {  # subcommand name -> module of this package
    "binarize": "binarize_command",
    "bundle": "bundle_command",
    "draw": "draw_command",
    "evaluate": "evaluate_command",
    "identifiability": "identifiability_command",
    "lm": "lm_command",
    "parse": "parse_command",
    "report": "report_command",
    "sample": "sample_command",
    "score": "score_command",
    "train": "train_command",
    "unmix": "unmix_command",
}

SHORT_HELP = {  # subcommand name -> its line in `lpcfg --help` (at most 59 characters)
    "binarize": "Normalise and binarize PTB trees.",
    "bundle": "Bundle models of the same trees into one.",
    "draw": "Draw trees as text, SVG or HTML.",
    "evaluate": "Score parsed trees against gold trees, as EVALB does.",
    "identifiability": "Check a parsing model's identifiability from moments.",
    "lm": "Language models of text: aggregate bigram and Kneser-Ney.",
    "parse": "Parse sentences with a model, one tree per line.",
    "report": "An HTML page of parses: F1, errors by kind, trees.",
    "sample": "Draw trees (or sentences) from a model.",
    "score": "Print each sentence's log probability under a model.",
    "train": "Learn a model from a treebank (or from sentences).",
    "unmix": "Learn a topology model from sentences by unmixing moments.",
}
