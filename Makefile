# The two entry points of the README: `make run` and `make test`. Each creates .venv on its own.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
UV_VERSION := 0.13.9
# pytest-xdist workers; each has its own PostgreSQL database and, for the Matrix tests, its own homeserver. The whole
# suite waits on processes and servers much of its time, so a third worker on 2 cores shortens it (back to back on
# 2 cores: 5:56 against 6:54); the fast tests only compute, and a third worker would slow them (56 s against 50 s).
TEST_WORKERS ?= 3
FAST_WORKERS ?= 2
LINTED := app brain bot rules adapters tests benchmarks migrations scripts
TYPED := app brain bot rules adapters

.PHONY: run test test-fast fuzz lint install locales locales-sync clean

# Python may write its bytecode caches (and pytest its rewritten test modules) even where the environment says
# otherwise: every run after the first then skips compiling and rewriting some 300 modules.
unexport PYTHONDONTWRITEBYTECODE

# Installs exactly what requirements.lock pins (made from pyproject.toml by `make lock`), with uv: a fresh
# install takes seconds instead of a minute.
$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(BIN)/uv pip install --quiet --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	touch $(STAMP)

install: $(STAMP) locales

# Compiles the gettext catalogues (.po -> .mo) that changed; part of every install.
CATALOGUES := locales/de/LC_MESSAGES/messages.mo locales/en/LC_MESSAGES/messages.mo

locales: $(CATALOGUES)

$(CATALOGUES): %.mo: %.po | $(STAMP)
	$(BIN)/pybabel compile --input-file $< --output-file $@ --statistics 2>&1 | grep -v '^compiling' || true
	@test -f $@

run: install
	$(BIN)/companion run

lint: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/lint-imports
	$(BIN)/mypy $(TYPED)

# What CI runs: the linters (ruff, the import contracts of pyproject.toml) and the whole suite, every benchmark at its
# quick size among it. mypy runs beside the tests (it needs one core for half a minute; the tests leave that much idle
# while they wait on processes).
test: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/lint-imports
	@$(BIN)/mypy $(TYPED) > $(VENV)/mypy.log 2>&1 & typing=$$!; \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS); tests=$$?; \
	wait $$typing; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; \
	test $$tests -eq 0 && test $$typed -eq 0

# While working: no linters, no slow tests (none that starts a process or a server besides the database).
test-fast: install
	$(BIN)/python -m pytest -q -n $(FAST_WORKERS) -m "not slow"

# The property tests with examples never drawn before (make test draws the same ones each run); run it now and then.
fuzz: install
	HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest -q -n $(FAST_WORKERS) \
		$$(grep -rl --include='test_*.py' '^from hypothesis import' tests)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache

# Re-extract message ids and update the German and English catalogues (see scripts/sync_locales.py).
locales-sync: $(STAMP)
	$(BIN)/python scripts/sync_locales.py

# Pins every dependency again from pyproject.toml (after changing it), for all platforms.
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 --no-header --quiet \
		-o requirements.lock
