"""Weighted context-free grammars learned from Hankel matrices (Bailly, Carreras, Luque &
Quattoni 2013, "Unsupervised spectral learning of WCFG as low-rank matrix completion").

- ``algebraic``: the algebraic WCFG of section 2.2 (inside and outside functions, the values
  of every string up to a length) and its single-symbol model files;
- ``hankel``: bases and Hankel blocks of section 3, estimated from bracketed samples or
  computed exactly from a WCFG;
- ``factorisation``: the WCFG read off a rank factorisation (Lemma 1) and supervised learning;
- ``completion``: the unsupervised learner of section 4 (low-rank Hankel completion);
- ``bracketed_samples``: bracketed sentences drawn from a WCFG.
"""
