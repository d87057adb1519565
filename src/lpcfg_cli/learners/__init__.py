"""Learners composed: the registry of every method of every family, model selection around
a learner, chains and ensembles. The algorithms themselves live with their family: the
latent-PCFG ones in ``latent_pcfg``, the language models' in ``lm.lm_learners``, the WCFGs'
in ``wcfg.wcfg_learners``, the topology models' in ``topology_models.unmix_learners``; the
protocol they share is ``model.protocol``.

Modules, lowest first: ``chain`` (learners fitted in turn), ``statesearch`` and
``selection`` (per-nonterminal state search; early stopping and state grids on dev data, as
wrappers), ``ensemble`` (one method with several seeds, bundled), ``registry`` (method name
to learner, and model files of every kind).
"""
