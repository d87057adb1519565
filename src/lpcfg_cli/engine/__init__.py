"""The chart engine: one set of passes for the parser, EM's E-step and tree scores.

Modules, lowest first: ``batching`` (the blocks charts are built for, within a memory
budget, and a batch too large for memory split), ``jit``, ``precompiled_signatures``,
``precompiled`` and ``dispatch`` (the compiled kernels, ahead of time or through numba),
``scaling`` (the one log-scale scheme), ``chart_grammars`` (a model's parameters arranged for
the passes), ``kernels`` (the latent pass's rule kernels), ``layout`` (span ids of a batch
of sentences), ``result`` (the ``Chart`` result type), ``latent`` (the L-PCFG pass over
allowed items), ``tree_charts`` (observed trees as charts: inside, outside and expected
counts), ``chain_counts`` (EM's E-step with unary rules), ``coarse`` (the PCFG pass over the
full chart), ``tokens`` (tokens to lexical rules), ``string_charts`` (sentences over all
their trees: string probabilities and EM's E-step from text).
"""
