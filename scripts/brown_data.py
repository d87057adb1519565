#!/usr/bin/env python3
"""Write the Brown corpus split of the language-model experiments (``make brown``).

train = the first 800K tokens of ``nltk.corpus.brown.sents()``, dev = the next 200K, test =
the rest, cut at sentence boundaries (``lpcfg_cli.lm.corpus.brown_split``): one sentence
per line, tokens separated by one space, case kept (``--lower`` lower-cases), before any
``<unk>`` replacement (``lpcfg lm train`` builds the vocabulary from train.txt). dev1.txt
and dev2.txt are the two halves of dev (``lpcfg_cli.lm.perplexity.halves``): the paper picks
EM's iterations on the first and reports the second. Prints the sentence and token counts
of each part and the vocabulary size.

    python scripts/brown_data.py --out data/brown
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.lm.corpus import Vocabulary, brown_split, write_sentences
from lpcfg_cli.lm.perplexity import halves


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/brown", help="output folder (default: data/brown)")
    ap.add_argument("--lower", action="store_true", help="lower-case every token")
    args = ap.parse_args()
    out = Path(args.out)
    try:
        parts = brown_split(lower=args.lower)
        parts["dev1"], parts["dev2"] = halves(parts["dev"])
        out.mkdir(parents=True, exist_ok=True)
        for name, sentences in parts.items():
            write_sentences(out / f"{name}.txt", sentences)
    except (LpcfgError, OSError) as err:  # no corpus, or an output folder we may not write
        print(f"brown_data: error: {err}", file=sys.stderr)
        return 2
    for name, sentences in parts.items():
        print(f"{out / name}.txt: {len(sentences)} sentences, {sum(map(len, sentences))} tokens")
    vocab = Vocabulary.build(parts["train"])
    seen = len({w for s in parts["train"] for w in s})
    print(
        f"vocabulary: {len(vocab) - 3} training words seen at least twice, of {seen} "
        f"(+ <unk>, </s>, <s>: {len(vocab)} ids)"
    )
    for name in ("dev", "dev2", "test"):
        encoded = vocab.encode(parts[name])
        print(f"{name}: {encoded.oov} of {encoded.tokens} tokens out of vocabulary")
    return 0


if __name__ == "__main__":
    sys.exit(main())
