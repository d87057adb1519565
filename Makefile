# lpcfg pipelines. `make test` is the project's test command; `make demo` runs the whole job.
PYTHON ?= .venv/bin/python
LPCFG  ?= $(PYTHON) -m lpcfg_cli
DATA   ?= data
MODELS ?= models
JOBS   ?= 2

.PHONY: test test-slow data demo bench clean

test:
	$(PYTHON) -m pytest -q

test-slow:
	$(PYTHON) -m pytest -q -m slow

data: $(DATA)/train.mrg

$(DATA)/train.mrg:
	$(PYTHON) scripts/prepare_data.py --out $(DATA)

demo:
	$(PYTHON) scripts/demo.py --data $(DATA) --models $(MODELS) --jobs $(JOBS)

bench: data
	$(PYTHON) scripts/bench_parse.py --data $(DATA)

clean:
	rm -rf $(MODELS) out
