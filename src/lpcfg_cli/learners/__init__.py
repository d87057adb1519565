"""Learners: every method of every family, with the one learner protocol and model
selection around them. A learner takes its options dataclass up front and ``fit`` returns
a model: an ``LPCFG`` (the parsing family), a language model (``lm``) or a topology model
(``topology``).

Modules, lowest first: ``protocol`` (the learner protocol), ``chain`` (learners fitted in
turn), ``split`` and ``chain_em`` (splitting symbols into states; EM with unary rules),
``features`` and ``products`` (node features and per-rule tensor products for the moment
methods), ``pcfg`` (the treebank PCFG), ``statesearch`` and ``selection`` (model selection
on dev data, as wrappers), ``pivot``, ``spectral``, ``consistency``, ``em``, ``ensemble``,
``splitmerge`` (the latent-PCFG algorithms and bundles), ``language_models``, ``topology``
and ``wcfg`` (the other families' learners over their packages), ``registry`` (method name
to learner, and model files of every kind).
"""
