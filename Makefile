# Everyday targets; .ci/run is what CI runs.
PY ?= .venv/bin/python

.PHONY: venv test lint docs bench ci

venv:
	python3 -m venv .venv && .venv/bin/pip install -q -e '.[test,dev]'

test:
	$(PY) -m pytest -q -n auto

lint:
	.venv/bin/ruff check ctxtools tests tools bench
	.venv/bin/ruff format --check ctxtools tests tools bench

docs:
	$(PY) tools/gen_docs.py

bench:
	$(PY) bench/bench_count.py

ci:
	bash .ci/run
