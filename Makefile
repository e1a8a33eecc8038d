# Every target builds its own virtualenv from the repo's own files.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: venv demo test lint typecheck bench clean

$(BIN)/tribunal: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(BIN)/tribunal

venv: $(BIN)/tribunal

demo: venv
	$(BIN)/tribunal demo

# Parallel workers (pytest-xdist), each taking whole test modules, the ones that run Ray first
# (tests/conftest.py); --durations lists the slowest tests of every run. Three on two cores: a
# worker often waits (on a child process, a batch window, a hung request's timeout) and a third
# has work then; with two the cores were ~89 % busy (672 s), with three ~97 % (605 s, same tests).
TEST_WORKERS ?= 3

# The real OpenID provider of tests/jobs/review/test_oidc.py (npm's oidc-provider, pinned by its lock
# file); without npm that test is skipped.
tests/oidc/node_modules: tests/oidc/package-lock.json
	if command -v npm >/dev/null 2>&1; then cd tests/oidc && npm ci --no-audit --no-fund --silent; fi

test: venv tests/oidc/node_modules
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# The quality gates CI runs before the tests: style, types (strict flags in pyproject.toml) and
# the dependency contracts ([tool.importlinter] in pyproject.toml).
lint: venv
	$(BIN)/ruff check evalcore jobs doubles tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

clean:
	rm -rf $(VENV) runs
