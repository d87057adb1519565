"""An lpcfg model as an nltk parser: ``NltkParser`` implements ``nltk.parse.api.ParserI``,
so that code written for nltk's parsers (``parse``, ``parse_sents``, ``parse_one``) uses an
lpcfg model unchanged. nltk is imported with this module only."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from nltk.parse.api import ParserI

from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser_options import ParserOptions
from lpcfg_cli.parsing.streaming import StreamParser
from lpcfg_cli.treebank.nltk_trees import to_nltk


class NltkParser(ParserI):
    """Parses token lists with ``model`` (a loaded ``LPCFG`` or a model file's path): each
    sentence gets one tree, its best parse (or the flat fallback tree the command line
    writes), as an ``nltk.Tree``; the empty sentence gets none."""

    def __init__(self, model: LPCFG | str, options: ParserOptions | None = None, jobs: int = 1):
        self.model = LPCFG.load(model) if isinstance(model, str) else model
        self.stream = StreamParser(self.model, options or ParserOptions(), jobs=jobs)

    def grammar(self) -> Any:
        """The model (nltk parsers return their grammar here)."""
        return self.model

    def parse(self, sent: Sequence[str], *args: Any, **kwargs: Any) -> Iterator[Any]:
        """An iterator over the parses of ``sent`` (one: the best)."""
        return next(iter(self.parse_sents([sent])))

    def parse_sents(self, sents: Iterable[Sequence[str]], *args: Any, **kwargs: Any) -> Iterator:
        """For each sentence, an iterator over its parses, parsed in blocks as a stream."""
        for result in self.stream.parse(list(s) for s in sents):
            yield iter([to_nltk(result.tree)] if result.tree is not None else [])
