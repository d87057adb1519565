"""The chart engine: one set of passes for the parser, EM's E-step and tree scores.

Modules, one job each: ``layout`` (span ids of a batch of sentences), ``scaling`` (the one
log-scale scheme), ``grammars`` (a model's parameters arranged for the passes), ``kernels``
(compiled rule kernels), ``coarse`` (the PCFG pass over the full chart), ``latent`` (the
L-PCFG pass over allowed items), ``trees`` (observed trees as charts: inside, outside and
expected counts), ``result`` (the ``Chart`` result type), ``batching`` (the blocks charts
are built for, within a memory budget, and a batch too large for memory split).
"""
