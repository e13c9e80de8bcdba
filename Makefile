# Everything a fresh machine with python3, git and make needs. Re-running reuses .venv.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "is ignored" || true
	$(BIN)/python -m pip install --quiet -e ".[dev]" 2>&1 | grep -v "is ignored" || true
	$(BIN)/python -m pip install --quiet --no-deps "rliable==1.2.0" 2>&1 | grep -v "is ignored" || true
	$(BIN)/python -c "import saturate, pytest, mlflow" && touch $(STAMP)

setup: $(STAMP)

demo: setup ## analyse the sample runs
	$(BIN)/saturate analyze sample_runs/

test: setup ## the whole test suite
	$(BIN)/python -m pytest -n 2 -q

lint: setup
	$(BIN)/ruff check saturate tests benchmarks sample_runs

bench: setup
	$(BIN)/python benchmarks/bench_fit.py
	$(BIN)/python benchmarks/bench_mlflow.py
	$(BIN)/python benchmarks/bench_accuracy.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
