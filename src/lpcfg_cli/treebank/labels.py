"""The binarized label space: how a treebank's labels become grammar symbols and back.

Binarization (``binarize``) writes structure into symbol names, so that a parsed tree can be
restored from its labels alone:

    symbol       := intermediate | chain [PRETERMINAL]
    intermediate := "@" annotated ["/" context]
    chain        := annotated ("+" annotated)*          collapsed unary chain, top first
    annotated    := label ("^" label)*                  vertical markovization: ancestors
    context      := symbol ("_" symbol)*                horizontal markovization: siblings

A treebank's labels may contain any character: ``+ ^ @ / _`` and the escape character ``%``
are written ``%2B %5E %40 %2F %5F %25`` inside a symbol (``escape``), so that any label
survives the round trip. Two more names use the escape character in a form escaping never
produces (a lower-case letter after it):

- ``WORD`` (``%w``): the pre-terminal given to a word that is a sibling of phrases
  (``(NP (DT the) dog)``), which the normal form needs; restoring removes it again;
- a ``PRETERMINAL`` suffix (``%t``): when a label is a pre-terminal in some trees and a
  phrase in others (``(pp (pp a))``... ``(PP (pp of) (NP ..))``), the grammar gives its
  pre-terminal use a symbol of its own, ``pp%t``, since a symbol of the normal form either
  rewrites to a word or to two symbols, never both.
"""

from __future__ import annotations

import functools
import re

CHAIN = "+"
PARENT = "^"
INTERMEDIATE = "@"
CONTEXT = "/"
SEPARATOR = "_"
ESCAPE = "%"
WORD = ESCAPE + "w"
PRETERMINAL = ESCAPE + "t"

_RESERVED = (ESCAPE, CHAIN, PARENT, INTERMEDIATE, CONTEXT, SEPARATOR)  # "%" first
_ESCAPED = {c: f"{ESCAPE}{ord(c):02X}" for c in _RESERVED}
_UNESCAPE = re.compile(r"%([0-9A-F]{2})")


def escape(label: str) -> str:
    """``label`` with the characters the symbol grammar reserves written as ``%XX``."""
    for c in _RESERVED:
        if c in label:
            label = label.replace(c, _ESCAPED[c])
    return label


def unescape(text: str) -> str:
    """Inverse of ``escape``."""
    return _UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text) if ESCAPE in text else text


def annotated(label: str, ancestors: tuple[str, ...] = ()) -> str:
    """A label with its ancestors' labels (vertical markovization), escaped."""
    return escape(label) + "".join(PARENT + escape(a) for a in ancestors)


def chain(parts: list[str]) -> str:
    """The symbol of a collapsed unary chain of annotated labels, top first."""
    return CHAIN.join(parts)


def intermediate(parent: str, context: list[str]) -> str:
    """The symbol of a factored node of ``parent`` (an annotated label) that remembers the
    symbols of the siblings in ``context`` (horizontal markovization)."""
    name = INTERMEDIATE + parent
    return name + CONTEXT + SEPARATOR.join(context) if context else name


def preterminal(symbol: str) -> str:
    """The symbol of a pre-terminal use of ``symbol`` when it also names a phrase."""
    return symbol + PRETERMINAL


def is_intermediate(symbol: str) -> bool:
    return symbol.startswith(INTERMEDIATE)


def chain_labels(symbol: str) -> list[str]:
    """The original labels of a chain symbol, top first (annotations removed); for an
    intermediate symbol, the label of the node it was factored from."""
    return list(chain_parts(symbol))


@functools.lru_cache(maxsize=1 << 16)
def chain_parts(symbol: str) -> tuple[str, ...]:
    """``chain_labels`` as a tuple, remembered: debinarizing a parse asks it of every node,
    and a grammar has few symbols."""
    if symbol.endswith(PRETERMINAL):
        symbol = symbol[: -len(PRETERMINAL)]
    if is_intermediate(symbol):
        symbol = symbol[len(INTERMEDIATE) :].split(CONTEXT, 1)[0]
    return tuple(unescape(part.split(PARENT, 1)[0]) for part in symbol.split(CHAIN))


# An ancestor annotation: "^" and an escaped label (the escape's "%XX" included; "%w" and
# "%t" are not part of a label).
_ANNOTATION = re.compile(r"\^(?:[^%+^@/_]|%[0-9A-F]{2})*")


def unannotated(symbol: str) -> str:
    """``symbol`` without its vertical markovization: every ancestor annotation removed, in
    its chain, in an intermediate symbol's parent and in its sibling context (``@NP^S/DT_NP^NP``
    -> ``@NP/DT_NP``), which is the symbol the same node has in a grammar binarized with
    ``--vertical 1`` and the same horizontal setting."""
    return _ANNOTATION.sub("", symbol) if PARENT in symbol else symbol


def without_context(symbol: str) -> str:
    """``symbol`` without horizontal markovization: an intermediate symbol's sibling context
    removed (``@NP/DT_NN`` -> ``@NP``), the symbol of ``--horizontal 0``."""
    return symbol.split(CONTEXT, 1)[0] if is_intermediate(symbol) else symbol


def emission_tag(symbol: str) -> str:
    """The tag a pre-terminal symbol emits words as, still escaped: the last part of its
    chain without the ``PRETERMINAL`` suffix (``S+NP`` and ``NP%t`` -> ``NP``), the key of
    the pre-terminals whose emissions are tied. Kept escaped, since unescaped the internal
    ``WORD`` and a treebank label spelt ``%w`` (``%25w``) would be one tag."""
    if symbol.endswith(PRETERMINAL):
        symbol = symbol[: -len(PRETERMINAL)]
    return symbol.rsplit(CHAIN, 1)[-1].split(PARENT, 1)[0]


def top_label(symbol: str) -> str:
    """The original label a symbol's node had at the top of its chain."""
    return chain_labels(symbol)[0]


def bottom_label(symbol: str) -> str:
    """The original label at the bottom of a symbol's chain (a pre-terminal's tag)."""
    return chain_labels(symbol)[-1]
