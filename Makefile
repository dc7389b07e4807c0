# The two entry points of the README: `make run` and `make test`. Each creates .venv on its own.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint install locales locales-sync clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP) locales

# Compiles the gettext catalogues (.po -> .mo); part of every install.
locales: $(STAMP)
	$(BIN)/pybabel compile --directory locales --domain messages --statistics 2>&1 | grep -v '^compiling' || true
	@test -f locales/de/LC_MESSAGES/messages.mo && test -f locales/en/LC_MESSAGES/messages.mo

run: install
	$(BIN)/companion run

lint: install
	$(BIN)/ruff check brain bot rules adapters tests benchmarks migrations
	$(BIN)/mypy brain bot rules adapters

test: lint
	$(BIN)/python -m pytest -q

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# Re-extract message ids and update the German and English catalogues (see scripts/sync_locales.py).
locales-sync: $(STAMP)
	$(BIN)/python scripts/sync_locales.py
