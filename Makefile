# Every target creates its own virtual environment on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all docs bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/cnb demo

test: $(STAMP)
	$(BIN)/pytest -q

test-all: $(STAMP)
	$(BIN)/pytest -q -m "slow or not slow"

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d site

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_naive_bayes.py
	$(BIN)/python benchmarks/bench_clustered.py
	$(BIN)/python benchmarks/bench_sharded.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) build dist site src/*.egg-info .pytest_cache
