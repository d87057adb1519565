# lpcfg pipelines. From a fresh clone, `make test` runs the test suite and `make demo` the
# whole job; each first creates .venv and installs the project with its test extras there
# (again only when pyproject.toml changes, so later runs start at once). PYTHON=... on the
# command line skips that set-up and uses that interpreter as it is (.ci/run calls
# `make test PYTHON=python`); a PYTHON in the environment is ignored (node-gyp users set one).
VENV        ?= .venv
BASE_PYTHON ?= python3
ifneq ($(origin PYTHON),command line)
override PYTHON := $(VENV)/bin/python
SETUP  := $(VENV)/.lpcfg-installed
else
SETUP  :=
endif
LPCFG  ?= $(PYTHON) -m lpcfg_cli
DATA   ?= data
SYNTHETIC_DATA ?= data-synthetic
MODELS ?= models
JOBS   ?= 2

FIGURES ?= docs/figures
BERKELEY ?=
# The Berkeley trainer's seeds (berkeley_seeds.py); 2, its default, is the run its folder's
# grammars come from, whose cycle dev picks is the anchor the speed figures are timed against.
BERKELEY_SEEDS ?= 0,1,2,3,4,5

.PHONY: test test-slow data demo bench consistency clean brown standin figures

test: $(SETUP)
	$(PYTHON) -m pytest -q

test-slow: $(SETUP)
	$(PYTHON) -m pytest -q -m slow

# The virtual environment, (re)installed when missing or older than pyproject.toml.
$(VENV)/.lpcfg-installed: pyproject.toml
	@$(BASE_PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "make: lpcfg needs Python 3.11+, and $(BASE_PYTHON) is $$($(BASE_PYTHON) -V 2>&1);" \
	       "try: make $(MAKECMDGOALS) BASE_PYTHON=python3.11" >&2; exit 1; }
	test -x $(VENV)/bin/python || $(BASE_PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,plots]'
	@touch $@

data: $(DATA)/source.txt

$(DATA)/source.txt: scripts/prepare_data.py | $(SETUP)
	$(PYTHON) scripts/prepare_data.py --out $(DATA)

# The standard split when the NLTK sample is installed, else a synthetic treebank in
# $(SYNTHETIC_DATA) (models and outputs in synthetic/ subfolders, every figure labelled).
demo: $(SETUP)
	$(PYTHON) scripts/demo.py --data $(DATA) --synthetic-data $(SYNTHETIC_DATA) \
	  --models $(MODELS) --jobs $(JOBS)

bench: data
	$(PYTHON) scripts/bench_parse.py --data $(DATA)

consistency: $(SETUP)
	$(PYTHON) scripts/bench_consistency.py --sizes 1000,10000,100000
	$(PYTHON) scripts/bench_consistency.py --sizes 1000,10000,100000 --target recursive

# Every figure of the docs, from real runs (PNG + the JSON drawn, in $(FIGURES)), each with
# the options it was committed with, then the docs' tables from the records; many hours on
# 2 cores, the WCFG figures and table1.py the most of it (they resume where they stopped).
# BERKELEY=DIR (the folder of the Berkeley parser's parse.sh) puts it on the speed figure
# and in the results table. The speed record itself: docs/experiments/speed.md.
figures: data brown standin
	$(PYTHON) scripts/learning_curves.py --data $(DATA) --jobs $(JOBS) \
	  --plot $(FIGURES)/learning_curves
	$(PYTHON) scripts/bench_consistency.py --sizes 1000,10000,100000 \
	  --plot $(FIGURES)/consistency
	$(PYTHON) scripts/bench_consistency.py --sizes 1000,10000,100000 --target recursive \
	  --plot $(FIGURES)/consistency_recursive
	$(PYTHON) scripts/lm_table2.py --data $(DATA)/brown --out out/lm_brown \
	  --json $(FIGURES)/lm_brown.json --plot $(FIGURES)/brown_perplexity
	$(PYTHON) scripts/lm_table2.py --data $(DATA)/brown --prior 5 --out out/lm_brown_prior \
	  --json $(FIGURES)/lm_brown_prior.json
	$(PYTHON) scripts/lm_table2.py --data $(DATA)/brown --fractions 0.25,0.5,1 --states 128 \
	  --out out/lm_brown_sizes --json $(FIGURES)/lm_brown_sizes.json
	$(PYTHON) scripts/lm_anchors.py --data $(DATA)/brown --states 16,256 --seeds 0,1,2 \
	  --json $(FIGURES)/lm_anchors.json
	$(PYTHON) scripts/lm_table2.py --corpus standin --data $(DATA)/standin \
	  --plot $(FIGURES)/standin_perplexity
	$(PYTHON) scripts/wcfg_random.py --out out/wcfg --targets 50 --em-max-size 1e6 \
	  --cache out/wcfg/cache --jobs $(JOBS) --plot $(FIGURES)/wcfg_kl
	$(PYTHON) scripts/wcfg_random.py --out out/wcfg --name wcfg_random_3x6 --states 3 \
	  --symbols 6 --targets 50 --sizes 1000,10000,100000,1000000,10000000 --kl-length 7 \
	  --methods "unsupervised spectral,supervised spectral" --jobs $(JOBS) \
	  --plot $(FIGURES)/wcfg_kl_3x6
	$(PYTHON) scripts/wcfg_dyck.py --out out/wcfg --json $(FIGURES)/wcfg_dyck.json
	$(PYTHON) scripts/wcfg_wsj10.py --out out/wcfg --json $(FIGURES)/wcfg_wsj10.json
	$(PYTHON) scripts/unmix_error.py --out out/unmix --json $(FIGURES)/unmix_error.json
	$(PYTHON) scripts/table1.py --data $(DATA) --jobs $(JOBS) --plot $(FIGURES)/f1_against_m
ifneq ($(BERKELEY),)
	$(PYTHON) scripts/ptb_results.py --data $(DATA) --out out/ptb --jobs $(JOBS) \
	  --berkeley $(BERKELEY)
	$(PYTHON) scripts/berkeley_seeds.py --berkeley $(BERKELEY) --seeds $(BERKELEY_SEEDS) \
	  --jobs $(JOBS)
	$(PYTHON) scripts/bench_parse.py --data $(DATA) --berkeley $(BERKELEY) --repeat 2 \
	  --berkeley-grammar out/berkeley_seeds/dev-choice.gr \
	  --copies 4 --large --by-length --plot $(FIGURES)/speed_by_length \
	  --json $(FIGURES)/speed.json --models $(PTB_MODELS)
	$(PYTHON) scripts/parse_settings.py --data $(DATA) --models out/ptb/models \
	  --out out/parse_settings
	$(PYTHON) scripts/bench_scale.py --data $(DATA) --out out/scale --trees 40000 \
	  --berkeley $(BERKELEY) --json $(FIGURES)/scale.json
else
	@echo "make figures: without BERKELEY=DIR the records ptb.json, speed.json (and the" \
	  "speed figure), parse_settings.json and scale.json are left as they are" >&2
endif
	$(PYTHON) scripts/doc_tables.py

# The seed-0 model of each single-grammar config (scripts/ptb_results.py): the speed
# record's models (EM first: the longest sentence and the lengths are timed with it).
PTB_MODELS = $(subst $(eval) ,$(comma),$(foreach c,em16 standard pivot_em16 pivot16 \
  spectral16 splitmerge,out/ptb/models/$(c)-s0.npz))
comma := ,

clean:
	rm -rf $(MODELS) out $(SYNTHETIC_DATA)

# The corpus splits of the language-model experiments (nltk's corpora, found through
# NLTK_DATA): data/brown/ and data/standin/ (the NYT stand-in: `python -m nltk.downloader
# movie_reviews abc masc_tagged pros_cons state_union webtext subjectivity
# sentence_polarity inaugural product_reviews_1 product_reviews_2`) hold train.txt,
# dev.txt, dev1.txt, dev2.txt and test.txt, one sentence per line.
brown: $(DATA)/brown/train.txt
standin: $(DATA)/standin/train.txt

$(DATA)/brown/train.txt: scripts/lm_data.py | $(SETUP)
	$(PYTHON) scripts/lm_data.py --out $(DATA)/brown

$(DATA)/standin/train.txt: scripts/lm_data.py | $(SETUP)
	$(PYTHON) scripts/lm_data.py --corpus standin --out $(DATA)/standin

# The multilingual benchmark (docs/experiments/languages.md): the fixed splits of nltk's
# alpino, cess_esp, floresta and sinica_treebank (`python -m nltk.downloader alpino cess_esp
# floresta sinica_treebank`), written to $(DATA)/languages when missing, every learner and,
# with BERKELEY=DIR (the folder of BerkeleyParser-1.7.jar), the Berkeley parser, on each; the
# figures in $(FIGURES)/languages.json (a second run resumes where the first stopped), models
# and parses in out/languages. Many hours on 2 cores.
.PHONY: languages
languages: $(SETUP)
	$(PYTHON) scripts/bench_languages.py --data $(DATA)/languages --out out/languages \
	  --json $(FIGURES)/languages.json --jobs $(JOBS) \
	  $(if $(BERKELEY),--berkeley $(BERKELEY),--only pcfg,em,splitmerge,product)
