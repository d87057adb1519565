"""Looking at parses: errors by kind, trees drawn, and a report that shows both.

- ``error_kinds``: the tree repairs that turn a parse into its gold tree, each classified
  by kind (Kummerfeld et al. 2012), on EVALB's brackets.
- ``drawing``: trees drawn on nltk's layout, as SVG whose phrase nodes a page can find and
  mark (wrong or missing brackets), as text, as one SVG document or one HTML page.
- ``html_report``: one self-contained HTML page of parses: F1, errors by kind, every
  sentence's trees with their wrong brackets marked, filters kept in the page's address.
"""
