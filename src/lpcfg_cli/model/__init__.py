"""Models: the L-PCFG and what is read off it without a chart.

Modules, lowest first: ``lpcfg`` (``LPCFG``: parameters, forms, ensembles, the model file),
``protocol`` (what every learner of every family is: options up front, ``fit`` returns a
model; the step-wise and decomposable kinds model selection reads), ``treebank_pcfg`` (the
treebank PCFG's relative-frequency estimates),
``backoff`` (the coarser PCFGs an annotated grammar backs off to), ``chain_params`` (a latent
PCFG with unary rules compiled into the collapsed grammar), ``rarewords`` (rare training
words given back when a model parses), ``sampling`` (random L-PCFGs and trees sampled
from them).
"""
