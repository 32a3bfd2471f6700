# cc_analytics — the two commands: `make report` and `make test` (each builds .venv itself).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SHARED ?= $(or $(CC_SHARED_DIR),../shared)
ORACLE_VENV ?= $(CURDIR)/.oracle-venv
SOURCES ?=
PYTEST_ARGS ?=
SANITIZE_EXAMPLES ?= 500

.PHONY: report test test-pure bench lint typecheck sanitize wheel-check oracle samples clean

$(VENV)/.stamp-base: pyproject.toml setup.py cc_analytics/frames/claude/_skim.c $(wildcard cc_analytics/frames/*.h cc_analytics/frames/codex/*.c cc_analytics/frames/copilot/*.c)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[views]'
	touch $@

$(VENV)/.stamp-dev: pyproject.toml setup.py cc_analytics/frames/claude/_skim.c $(wildcard cc_analytics/frames/*.h cc_analytics/frames/codex/*.c cc_analytics/frames/copilot/*.c)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.stamp-base $@

## report: batch report over data-samples/ (or SOURCES="~/.claude/projects ~/.chainlesschain/sessions")
report: $(VENV)/.stamp-base
	$(VENV)/bin/cc-analytics report $(if $(SOURCES),$(SOURCES),--samples) --out report

## oracle: the reference library in a Python 3.13 venv, for differential tests (skipped when unavailable)
oracle:
	@if [ -d "$(SHARED)/oracle" ]; then \
		bash $(SHARED)/oracle/setup.sh $(ORACLE_VENV) >/dev/null || echo "oracle venv unavailable: differential tests will be skipped"; \
	else echo "$(SHARED) absent: oracle tests will be skipped"; fi

## test: unit, conformance, notebooks (nbval) and benchmarks in smoke mode (PYTEST_ARGS: extra pytest options)
test: $(VENV)/.stamp-dev oracle
	CC_ORACLE_VENV=$(ORACLE_VENV) $(PY) -m pytest $(PYTEST_ARGS)
	$(PY) -m pytest -q --doctest-modules cc_analytics
	$(PY) -m pytest --nbval-lax notebooks/
	$(PY) benchmarks/chainless_context.py --smoke
	@for b in benchmarks/claude_frames.py benchmarks/windows.py benchmarks/cost_vs_ccusage.py benchmarks/archive.py benchmarks/explorer.py benchmarks/codex_frames.py benchmarks/composition.py benchmarks/cache_frames.py benchmarks/opencode_frames.py benchmarks/gemini_frames.py benchmarks/copilot_frames.py benchmarks/bigfile.py; do \
		if [ -f $$b ]; then echo "== $$b --smoke"; CC_ORACLE_VENV=$(ORACLE_VENV) $(PY) $$b --smoke || exit 1; fi; done

## test-pure: the tests as a user without a C compiler runs the package (CC_ANALYTICS_PURE_PYTHON=1): pytest only,
## without the slow ones, the browser, and the core and oracle tests (the core library has no C path)
test-pure: $(VENV)/.stamp-dev
	CC_ANALYTICS_PURE_PYTHON=1 $(PY) -m pytest -q -p no:cacheprovider -m "not slow" \
		--ignore=tests/browser --ignore=tests/core --ignore=tests/differential $(PYTEST_ARGS)

bench: $(VENV)/.stamp-dev oracle
	$(PY) benchmarks/chainless_context.py
	$(PY) benchmarks/claude_frames.py --make 100 --make 1000 --report
	CC_ORACLE_VENV=$(ORACLE_VENV) $(PY) benchmarks/windows.py
	$(PY) benchmarks/cost_vs_ccusage.py
	$(PY) benchmarks/archive.py --make 1000 --rounds 3
	$(PY) benchmarks/explorer.py
	$(PY) benchmarks/composition.py --size-mb 1000 --rounds 1
	$(PY) benchmarks/bigfile.py --size-mb 1000 --rounds 1

## lint: mypy, ruff, and the import contracts (the layers, stated in tests/contracts/test_layers.py)
lint: typecheck
	$(PY) -m pytest -q -p no:cacheprovider tests/contracts/test_layers.py
	$(VENV)/bin/ruff check cc_analytics tests benchmarks
	$(VENV)/bin/ruff format --check cc_analytics tests benchmarks

## typecheck: mypy on the leaves, core, frames and archive (configured in pyproject.toml)
typecheck: $(VENV)/.stamp-dev
	$(VENV)/bin/mypy

## sanitize: the C extension built with AddressSanitizer + UBSan in a temporary folder, under its fuzz targets
## (their corpus, then SANITIZE_EXAMPLES generated inputs each) and its tests; fails on any sanitizer report
sanitize: $(VENV)/.stamp-dev
	tests/fuzz/sanitize.sh $(PY) $(SANITIZE_EXAMPLES)

## wheel-check: build the wheel (python -m build), install it in a clean venv and run the installed cc-analytics
wheel-check: $(VENV)/.stamp-dev
	.ci/wheel-check $(PY)

samples: $(VENV)/.stamp-base
	$(PY) data-samples/make_samples.py

clean:
	rm -rf $(VENV) report .pytest_cache
