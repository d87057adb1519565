"""Learners: each turns a grammar and a compiled treebank into an ``LPCFG``."""
