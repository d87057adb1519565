"""A larger English corpus that stands in for the NYT half of Cohen & Collins (2014), table 2.

The paper's second language-model corpus is the New York Times part of Gigaword (section 8:
1.31 billion training tokens), which is licensed and cannot be downloaded. What stands in
for it is built only from nltk's free English corpora, which a user fetches with
``python -m nltk.downloader`` (``STANDIN_CORPORA``): 4.8 million tokens of news (ABC),
speeches, web text, product and film reviews and the MASC sample. It is 4.2 times the
Brown corpus and 1/340 of the paper's NYT text: it tests the paper's large-data claim in
kind, not at its scale.

Preparation (``standin_split``), as the paper prepares NYT where it says how:

* **Sentences and tokens.** The corpora that nltk ships split into sentences
  (``movie_reviews``, ``subjectivity``, ``masc_tagged``, ...) are read as nltk gives them.
  The four plain-text corpora (``abc``, ``state_union``, ``webtext``, ``inaugural``) are
  cut into lines (each line of these files is a paragraph, a headline or a post), each line
  into sentences by a Punkt model trained, unsupervised, on that corpus's own text (nltk's
  pre-trained Punkt is a separate download the experiment does not need), and each sentence
  into tokens by ``WordPunctTokenizer``, the tokenizer of nltk's own readers for them.
* **Case.** Every token is lower-cased (and one that holds whitespace split at it): four
  of the corpora come lower-cased already, and a vocabulary that mixed the two would split
  words by where they came from.
* **The split.** Each corpus is cut, in its own file order and at sentence boundaries
  (``corpus.split_by_tokens``), into 80 % train, 5 % + 5 % dev (the paper's two halves:
  iterations, report) and 10 % test, and the parts of the corpora are concatenated. The
  paper's NYT proportions are 81 / 10 / 10 (1.31 G, 159 M, 156 M tokens); cutting each corpus
  alike keeps every genre in every part, where one cut of the concatenation would leave the
  last corpora to the test set alone.
* **Vocabulary and unknown words** are the experiment's choice, not the corpus's: the paper
  replaces training words seen fewer than 20 times by UNK and leaves unknown test words out
  of perplexity (``Vocabulary.build(min_count=20)``, ``Vocabulary.events(skip_unknown=True)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.lm.corpus import Sentence, split_by_tokens

# nltk's free English corpora of running text, largest first. gutenberg (2.6 M tokens) and
# reuters (1.7 M) belong here too, but the figures of docs/experiments/lm-standin.md were
# made without them (they could not be fetched where the figures were made), and the
# default list rebuilds those figures; ``lm_data.py --corpora`` adds them.
STANDIN_CORPORA = (
    "movie_reviews",
    "abc",
    "masc_tagged",
    "pros_cons",
    "state_union",
    "webtext",
    "subjectivity",
    "sentence_polarity",
    "inaugural",
    "product_reviews_1",
    "product_reviews_2",
)
# Plain-text corpora: nltk's reader needs its pre-trained Punkt to cut them into sentences.
# In the first four each line is a unit (a paragraph, a headline, a post); gutenberg and
# reuters wrap their lines, so there a unit is a block between blank lines.
PLAIN_TEXT = frozenset({"abc", "state_union", "webtext", "inaugural", "gutenberg", "reuters"})
WRAPPED = frozenset({"gutenberg", "reuters"})
# Corpora with one sentence per line, tokens separated by spaces (nltk's reader for
# movie_reviews has no sentence tokenizer set, so its ``sents()`` refuses).
ONE_SENTENCE_PER_LINE = frozenset({"movie_reviews"})
FRACTIONS = (0.8, 0.05, 0.05)  # train, dev1, dev2; test is the rest


def text_units(text: str, wrapped: bool) -> list[str]:
    """The units of a plain text that no sentence crosses: its non-blank lines, or, where
    the text wraps its lines (``wrapped``), its blocks between blank lines, each on one line."""
    if not wrapped:
        return [line for line in text.splitlines() if line.strip()]
    blocks, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.strip():
            block.append(line.strip())
        elif block:
            blocks.append(" ".join(block))
            block = []
    return blocks


def sentences_of_text(
    lines: Sequence[str], sentence_splitter: Callable[[str], list[str]]
) -> list[Sentence]:
    """Each non-blank unit of ``lines`` cut into sentences by ``sentence_splitter`` and each
    sentence into tokens by ``WordPunctTokenizer``; sentences with no token are dropped."""
    from nltk.tokenize import WordPunctTokenizer

    tokenize = WordPunctTokenizer().tokenize
    out = []
    for line in lines:
        if not line.strip():
            continue
        for sentence in sentence_splitter(line):
            tokens = tokenize(sentence)
            if tokens:
                out.append(tokens)
    return out


def corpus_sentences(name: str) -> list[Sentence]:
    """The sentences of nltk's corpus ``name``, in its file order, prepared as the module
    docstring says but for case. ``LpcfgError`` when nltk does not have it."""
    import nltk.corpus
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    reader = getattr(nltk.corpus, name, None)
    try:
        if reader is None:  # not a corpus nltk knows by name
            raise LookupError(name)
        fileids = reader.fileids()  # nltk looks the corpus up on first use
    except LookupError:
        raise LpcfgError(
            f"the NLTK corpus {name!r} is not installed: run `python -m nltk.downloader "
            f"{name}` or set NLTK_DATA"
        ) from None
    if name in PLAIN_TEXT:
        texts = [reader.raw(f) for f in fileids]
        # Unsupervised Punkt (Kiss & Strunk 2006) on the corpus's own text.
        splitter = PunktSentenceTokenizer("\n".join(texts)).tokenize
        wrapped = name in WRAPPED
        return [s for text in texts for s in sentences_of_text(text_units(text, wrapped), splitter)]
    if name in ONE_SENTENCE_PER_LINE:
        return [
            line.split() for f in fileids for line in reader.raw(f).splitlines() if line.split()
        ]
    return [list(s) for s in reader.sents(fileids) if len(s)]


def split_corpus(sentences: Sequence[Sentence]) -> dict[str, list[Sentence]]:
    """One corpus cut into train, dev1, dev2 and test by ``FRACTIONS`` of its tokens."""
    total = sum(len(s) for s in sentences)
    sizes = [round(f * total) for f in FRACTIONS]
    train, dev1, dev2, test = split_by_tokens(sentences, sizes)
    return {"train": train, "dev1": dev1, "dev2": dev2, "test": test}


def standin_split(
    corpora: Sequence[str] = STANDIN_CORPORA,
    *,
    reader: Callable[[str], list[Sentence]] = corpus_sentences,
) -> tuple[dict[str, list[Sentence]], dict[str, dict[str, int]]]:
    """The stand-in corpus: each of ``corpora`` read by ``reader``, lower-cased, cut by
    ``split_corpus``, and its parts concatenated in the order of ``corpora``. Returns the
    parts (``train``, ``dev1``, ``dev2``, ``test`` and ``dev``: ``dev1`` then ``dev2``) and,
    per corpus, how many tokens of each part came from it."""
    if not corpora:
        raise LpcfgError("the stand-in corpus needs at least one corpus")
    if len(set(corpora)) != len(corpora):
        raise LpcfgError(f"a corpus is listed twice: {', '.join(corpora)}")
    parts: dict[str, list[Sentence]] = {"train": [], "dev1": [], "dev2": [], "test": []}
    sources: dict[str, dict[str, int]] = {}
    for name in corpora:
        # A token of a corpus that holds whitespace (or is empty) cannot be one token of a
        # text file: it is split at the whitespace (or dropped), as a text reader would.
        lowered = (" ".join(sentence).lower().split() for sentence in reader(name))
        sentences = [tokens for tokens in lowered if tokens]
        if not sentences:
            raise LpcfgError(f"the NLTK corpus {name!r} has no sentences")
        pieces = split_corpus(sentences)
        sources[name] = {part: sum(map(len, piece)) for part, piece in pieces.items()}
        for part, piece in pieces.items():
            parts[part].extend(piece)
    parts["dev"] = parts["dev1"] + parts["dev2"]
    return parts, sources
