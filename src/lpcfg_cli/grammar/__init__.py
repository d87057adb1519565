"""Grammars: a binarized treebank as arrays, the vocabulary, and the data learners take.

Modules, lowest first: ``lexicon`` (words and unknown-word signatures), ``indexed``
(``Grammar``: symbols, rules and vocabulary), ``compiled`` (every node of every tree as
arrays, and the grammar built from them), ``heldout`` (dev trees and dev sentences for model
selection), ``training_data`` (treebank files or sentences to what every learner trains
on), ``unary_chains`` (collapsed unary chains factored back into unary rules).
"""
