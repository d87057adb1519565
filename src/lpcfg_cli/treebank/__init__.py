"""Treebanks: trees, their bracketed text, their conventions, binarization and scoring.

Modules, lowest first: ``labels`` (the binarized label space), ``tree`` (the tree type),
``binarize`` (reversible binarization into the papers' normal form), ``conventions`` and
``normalize`` (what a treebank writes beside the syntax, and the form trees are trained and
evaluated in), ``sentences`` (sentences of text, read and checked), ``ptb`` (bracketed text
read and written), ``evaluation`` (EVALB's figures for trees in memory), ``heads`` (lexical
heads), ``nltk_trees`` (to and from ``nltk.Tree``), ``nltk_samples`` and ``ptb_sample``
(the fixed splits of nltk's treebanks).
"""
