"""Looking at parses: errors by kind, trees drawn, and a report that shows both.

- ``error_kinds``: the tree repairs that turn a parse into its gold tree, each classified
  by kind (Kummerfeld et al. 2012), on EVALB's brackets.
"""
