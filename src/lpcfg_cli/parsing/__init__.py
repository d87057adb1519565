"""Running a model: parsing sentences into trees, and scoring them.

``parser.Parser`` is the one way in (a model, an arranged model or a model file's path;
``parse``, ``trees``, ``score``); everything else here serves it. Modules, lowest first:

- ``parser_options``: ``ParserOptions``, what the parser is told, and the length limit;
- ``run_stats``: what parsing and scoring runs count (``ParseStats``, ``ScoreStats``);
- ``arranged``, ``arranged_cache``: a model arranged for parsing, and kept between runs;
- ``decoders``, ``combine``: trees from posteriors; an ensemble's posteriors combined;
- ``smoothed``, ``glue``: the second and third tiers, for sentences the grammar cannot
  derive;
- ``tiers``: ``BlockParser``, a block of sentences through the four tiers;
- ``workers``, ``streaming``: worker processes, and a stream of blocks through them;
- ``parser``: the front;
- ``tree_probability``, ``dev_f1``, ``nltk_parser``: a tree's probability, dev F1 for the
  learners, and a model as an nltk parser, each through the front.
"""
