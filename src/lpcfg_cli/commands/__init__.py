"""One module per subcommand; each defines a click command named ``command``.

``SUBCOMMANDS`` names them: the command line imports a module only when its subcommand runs
(``cli.LpcfgGroup``), and ``--config`` files take a table for each (``config``).
"""

SUBCOMMANDS = {  # subcommand name -> module of this package
    "binarize": "binarize",
    "bundle": "bundle",
    "evaluate": "evaluate",
    "identifiability": "identifiability",
    "lm": "lm",
    "parse": "parse",
    "sample": "sample",
    "score": "score",
    "train": "train",
    "unmix": "unmix",
}
