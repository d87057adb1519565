# lpcfg pipelines. `make test` is the project's test command; `make demo` runs the whole job.
PYTHON ?= .venv/bin/python
LPCFG  ?= $(PYTHON) -m lpcfg_cli
DATA   ?= data
MODELS ?= models
JOBS   ?= 2

.PHONY: test test-slow data demo bench consistency clean

test:
	$(PYTHON) -m pytest -q

test-slow:
	$(PYTHON) -m pytest -q -m slow

data: $(DATA)/train.mrg

$(DATA)/train.mrg:
	$(PYTHON) scripts/prepare_data.py --out $(DATA)

demo:
	$(PYTHON) scripts/demo.py --data $(DATA) --models $(MODELS) --jobs $(JOBS) --table out/results.md

bench: data
	$(PYTHON) scripts/bench_parse.py --data $(DATA)

consistency:
	$(PYTHON) scripts/bench_consistency.py --sizes 1000,10000,100000

clean:
	rm -rf $(MODELS) out
