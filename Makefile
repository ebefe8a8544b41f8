# One command to set up and run the app, one to set up and run the tests.
# Both create (or reuse) .venv in the repo root; nothing depends on a hand-installed package.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test test-fast bench browser-deps clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,dask,postgres]"
	@touch $(STAMP)

run: $(STAMP)
	$(PY) -m streamlit run app.py

# Debian's chromium for the one real-browser test (never `playwright install`).
browser-deps:
	@bash scripts/ensure_chromium.sh

# ruff first (rule sets in pyproject.toml's [tool.ruff]): a lint failure stops the run before the slow suite.
test: $(STAMP) browser-deps
	$(PY) -m ruff check .
	$(PY) -m pytest -q

# The same without the tests marked `slow` (large audits, Dask clusters, sweeps, the longest app flows) or
# `browser` (Chromium): the edit-and-test loop, about half the time. `make test` still runs them all.
test-fast: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q -m "not slow and not browser"

bench: $(STAMP)
	$(PY) -m benchmarks.run_all

clean:
	rm -rf $(VENV) .pytest_cache
