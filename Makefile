# Everything a fresh machine with python3, git and make needs. Re-running reuses .venv.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup demo test test-fast durations lint bench fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "is ignored" || true
	$(BIN)/python -m pip install --quiet -e ".[dev]" 2>&1 | grep -v "is ignored" || true
	$(BIN)/python -m pip install --quiet --no-deps "rliable==1.2.0" 2>&1 | grep -v "is ignored" || true
	@# the fit's compiled kernels are built here once (numba caches them), not in the first analysis
	$(BIN)/python -c "import saturate, pytest, mlflow; from saturate.fit.kernels import warm; warm()" \
		&& touch $(STAMP)

setup: $(STAMP)

demo: setup ## analyse the sample runs
	$(BIN)/saturate analyze sample_runs/

# The lanes a test belongs to are markers (pyproject.toml; tests/conftest.py classes most of them
# by the fixtures a test uses). PYTEST_ARGS adds options, e.g. PYTEST_ARGS=--durations=25 in CI.
# The tests keep their compiled, assertion-rewritten modules between runs even where the
# environment says PYTHONDONTWRITEBYTECODE (collecting them costs 30 s without, 13 s with).
# Two test processes, each given whole modules (--dist loadfile): a module's fixtures (a server,
# a cluster, an analysis) are made once, not on both. Under pytest an analysis runs in its test's
# process (tests/conftest.py), not on a pool of its own. Budget: `make test` <= 5 min on 2 cores
# in a fresh clone, setup included; `make test-fast` <= 90 s; `make durations` rewrites
# tests/durations.txt, where each module's time can be seen.
HEAVY_LANES := server or browser or cluster or notebook or subprocess or slow
PYTEST_ARGS ?=
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n 2 --dist loadfile

test: setup ## the whole test suite, every lane
	$(PYTEST) -q $(PYTEST_ARGS)

test-fast: setup ## the unit tests: no server, browser, cluster, kernel, process or long run (90 s)
	SATURATE_FAST_LANE=1 $(PYTEST) -q -m "not ($(HEAVY_LANES))" $(PYTEST_ARGS)

durations: setup ## the whole suite, each test's and module's time written to tests/durations.txt
	$(PYTEST) -q -p no:cacheprovider --durations-file tests/durations.txt $(PYTEST_ARGS)

lint: setup ## ruff on everything, mypy on saturate/ ([tool.mypy] in pyproject.toml)
	$(BIN)/ruff check saturate tests benchmarks sample_runs docs
	$(BIN)/mypy saturate

bench: setup
	$(BIN)/python benchmarks/bench_fit.py
	$(BIN)/python benchmarks/bench_mlflow.py
	$(BIN)/python benchmarks/bench_accuracy.py

FUZZ_SEED ?= 0
FUZZ_LOG  := build/fuzz-log.jsonl
fuzz: setup ## 10,000 fuzzed inputs (files, curves, CLI runs): counts of cases, tracebacks and hangs
	mkdir -p build && rm -f $(FUZZ_LOG)
	SATURATE_FUZZ=long SATURATE_FUZZ_LOG=$(CURDIR)/$(FUZZ_LOG) $(BIN)/python -m pytest -n 2 -q \
		-p no:cacheprovider --hypothesis-seed=$(FUZZ_SEED) \
		tests/test_fuzz_inputs.py tests/test_fuzz_analysis.py tests/test_fuzz_targets.py; \
	status=$$?; $(BIN)/python tests/fuzzing.py $(FUZZ_LOG) && exit $$status

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
