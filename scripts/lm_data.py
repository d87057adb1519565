#!/usr/bin/env python3
"""Write a corpus split of the language-model experiments (``make brown``, ``make standin``).

``--corpus brown`` (the default): train = the first 800K tokens of
``nltk.corpus.brown.sents()``, dev = the next 200K, test = the rest, cut at sentence
boundaries (``lpcfg_cli.lm.corpus.brown_split``), case kept (``--lower`` lower-cases).
``--corpus standin``: the stand-in for the paper's NYT corpus, nltk's free English corpora
(``--corpora``), each cut 80 / 5 / 5 / 10 and lower-cased (``lpcfg_cli.lm.standin``);
``sources.json`` records the tokens each corpus gave each part.

Writes one sentence per line, tokens separated by one space, before any ``<unk>``
replacement (``lpcfg lm train`` builds the vocabulary from train.txt): train.txt, dev.txt,
its halves dev1.txt and dev2.txt (the paper picks EM's iterations on the first and reports
the second) and test.txt. Prints the sentence and token counts of each part and the
vocabulary at the corpus's threshold (Brown: words seen twice; the stand-in: 20 times, as
the paper's NYT).

    python scripts/lm_data.py --out data/brown
    python scripts/lm_data.py --corpus standin --out data/standin
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.lm.corpus import Vocabulary, brown_split, write_sentences
from lpcfg_cli.lm.perplexity import halves
from lpcfg_cli.lm.standin import STANDIN_CORPORA, standin_split

MIN_COUNT = {"brown": 2, "standin": 20}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=("brown", "standin"), default="brown")
    ap.add_argument("--out", default=None, help="output folder (default: data/CORPUS)")
    ap.add_argument("--lower", action="store_true", help="Brown: lower-case every token")
    ap.add_argument(
        "--corpora",
        default=",".join(STANDIN_CORPORA),
        help="the stand-in's nltk corpora, comma-separated (default: %(default)s)",
    )
    args = ap.parse_args()
    out = Path(args.out or f"data/{args.corpus}")
    sources = None
    try:
        if args.corpus == "brown":
            parts = brown_split(lower=args.lower)
            parts["dev1"], parts["dev2"] = halves(parts["dev"])
        else:
            parts, sources = standin_split([c for c in args.corpora.split(",") if c])
        out.mkdir(parents=True, exist_ok=True)
        for name, sentences in parts.items():
            write_sentences(out / f"{name}.txt", sentences)
        if sources is not None:
            (out / "sources.json").write_text(json.dumps(sources, indent=1) + "\n")
    except (LpcfgError, OSError) as err:  # no corpus, or an output folder we may not write
        print(f"lm_data: error: {err}", file=sys.stderr)
        return 2
    for name, sentences in parts.items():
        print(f"{out / name}.txt: {len(sentences)} sentences, {sum(map(len, sentences))} tokens")
    min_count = MIN_COUNT[args.corpus]
    vocab = Vocabulary.build(parts["train"], min_count)
    seen = len({w for s in parts["train"] for w in s})
    print(
        f"vocabulary: {len(vocab) - 3} training words seen at least {min_count} times, of "
        f"{seen} (+ <unk>, </s>, <s>: {len(vocab)} ids)"
    )
    for name in ("dev", "dev2", "test"):
        encoded = vocab.encode(parts[name])
        print(f"{name}: {encoded.oov} of {encoded.tokens} tokens out of vocabulary")
    return 0


if __name__ == "__main__":
    sys.exit(main())
