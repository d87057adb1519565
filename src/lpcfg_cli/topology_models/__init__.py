"""Parsing models with random tree topologies (Hsu, Kakade & Liang 2012): their moments,
the identifiability checker (section 4) and unmixing learners (section 5).

Modules, in import order: ``families`` (the six models and their free parameters),
``moments`` (moments of chosen word positions by dynamic programs over every topology),
``observations`` (the paper's observation functions as moment rows), ``jacobian``
(complex-step Jacobians and the rank decision), ``identifiability`` (CHECKIDENTIFIABILITY
and the Figure 2 table); ``samples`` (drawing sentences, empirical moments, text),
``mixing`` (the PCFG-IE mixing matrix and compound parameters), ``unmix`` (UNMIX for PCFG-IE
and DEP-IES) and ``topology_file`` (topology model files, which ``lpcfg sample`` draws
from).
"""
