# Sourcerer — every target creates .venv as needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench bench-quick lint install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[local,aws,pdf,opensearch,dev,bench]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)  ## answer sample questions over bundled passages (no key, no network)
	SOURCERER_HOME=$${SOURCERER_HOME:-.sourcerer} $(BIN)/sourcerer demo

test: $(STAMP)  ## the test suite (no network beyond 127.0.0.1)
	$(BIN)/python -m pytest -q

bench: $(STAMP)  ## benchmarks on ../shared/eval; tables in bench/results/
	$(BIN)/python -m bench.run

bench-quick: $(STAMP)
	$(BIN)/python -m bench.run --quick

lint: $(STAMP)
	$(BIN)/ruff check layers tests bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
