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
# Two pytest-xdist workers (the CI machine's two cores), each test file on one worker (--dist loadfile: a file's
# module fixtures — a Streamlit server, a data set — are made once): 6 min instead of 9 on a quiet 2-core machine.
PYTEST := $(PY) -m pytest -q -n 2 --dist loadfile

test: $(STAMP) browser-deps
	$(PY) -m ruff check .
	$(PYTEST)

# The same without the tests marked `slow` (large audits, Dask clusters, sweeps, the longest app flows) or
# `browser` (Chromium): the edit-and-test loop, about half the time. `make test` still runs them all.
test-fast: $(STAMP)
	$(PY) -m ruff check .
	$(PYTEST) -m "not slow and not browser"

bench: $(STAMP)
	$(PY) -m benchmarks.run_all

clean:
	rm -rf $(VENV) .pytest_cache
