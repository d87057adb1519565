"""Bigram and trigram language models on word sequences (``lpcfg lm``).

The setting of Cohen & Collins (2014), section 8: the Saul & Pereira (1997) aggregate
bigram model ``p(w2 | w1) = sum_h r(h | w1) s(w2 | h)`` learned by EM, by the pivot
algorithm and by pivot then EM, against interpolated Kneser-Ney bigram and trigram
baselines, all scored by one perplexity function on the Brown corpus and on a larger
stand-in for the paper's NYT corpus.

Modules, in import order: ``corpus`` (the Brown split, text files, the vocabulary and
n-gram events), ``standin`` (the NYT stand-in from nltk's free corpora), ``perplexity``
(the model protocol and perplexity), ``kneserney`` (kn2, kn3), ``aggregate`` (the
aggregate bigram model) and ``lm_file`` (model files and the method -> model class
table). Their learners are ``lm.lm_learners``.
"""
