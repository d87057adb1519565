"""Numerical building blocks the learners share.

Modules, lowest first: ``svd`` (truncated SVD of sparse cross-covariances, guarded against
spurious directions), ``anchors`` (separable non-negative decomposition, Cohen & Collins
2014, section 5.2), ``patience`` (early stopping on a held-out score).
"""
