"""Models: the L-PCFG and what is read off it without a chart.

Modules, lowest first: ``lpcfg`` (``LPCFG``: parameters, forms, ensembles, the model file),
``backoff`` (the coarser PCFGs an annotated grammar backs off to), ``chain_params`` (a latent
PCFG with unary rules compiled into the collapsed grammar), ``rarewords`` (rare training
words given back when a model parses), ``sampling`` (random L-PCFGs and trees sampled
from them).
"""
