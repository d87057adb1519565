"""The latent-PCFG algorithms, each a learner of the protocol (``model.protocol``): options
up front, ``fit`` returns an ``LPCFG``. Model selection, chains and ensembles wrap them from
``learners``.

Modules, lowest first: ``pcfg`` (the treebank PCFG as a learner), ``split`` (symbols split
into latent states, and merged), ``chain_em`` (EM, splitting and merging with latent unary
rules), ``em`` (EM, Matsuzaki et al. 2005), ``splitmerge`` (split-merge EM, Petrov et al.
2006), ``features`` and ``products`` (node features and per-rule tensor products),
``spectral`` (Cohen et al. 2012, 2014), ``pivot`` (Cohen & Collins 2014), ``consistency``
(checks of the moment methods against a known grammar).
"""
