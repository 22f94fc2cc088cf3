# labmate — see README.md.
GO  ?= go
BIN := bin/labmate

.PHONY: run test build deps bench bench-campaign vet clean

## run: install dependencies, build labmate and start the server on 127.0.0.1:7878
run: deps build
	$(BIN) kernels
	$(BIN) serve

## test: install dependencies, vet, and run every test with real interpreters, a throw-away
## PostgreSQL (scripts/postgres-test starts it, exports LABMATE_TEST_POSTGRES, and stops it)
## and a real Chromium for the dashboard (its screenshots land in artifacts/); the Octave
## retrieval-quality test runs without -race, under which indexing takes minutes
test: deps vet
	LABMATE_ARTIFACTS=$(CURDIR)/artifacts ./scripts/postgres-test run $(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run TestOctaveRetrieval -v ./knowledge/sqlite
	$(GO) test -run '^$$' -fuzz FuzzDecodeClient -fuzztime 100000x ./server

## bench: kernels (start, per-cell overhead, interrupt and line latency), perception's cost
## per observation, the print-to-interrupt latency of the Hot-Fix, one streamed model call
## through each LLM adapter over loopback, the agent's overhead per turn, documentation search
## p50/p99 on the installed Octave's help (and the time to index it), fetch+clean throughput,
## the MCP exec round trip per transport, and memory (ingest, search latency and size at
## 100,000 facts on SQLite and PostgreSQL, with and without entity expansion, LoCoMo recall,
## the memory rounds R1–R3 and transfer), the skill library's workflows against their published
## references (eval/workflows), and the eval harness's overhead per trial)
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 200x ./kernel/... ./lab/bench/client ./operation
	$(GO) test -run '^$$' -bench . -benchmem ./perception
	$(GO) test -run '^$$' -bench . -benchtime 1x ./server
	$(GO) test -run '^$$' -bench . -benchtime 300x ./server/mcp
	$(GO) test -run '^$$' -bench . ./protocol/sqlite
	$(GO) test -run '^$$' -bench . -benchmem ./llm/openai ./llm/anthropic
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./knowledge/sqlite
	$(GO) test -run '^$$' -bench FetchClean -benchtime 5x ./knowledge/fetch
	$(GO) test -run '^$$' -bench 'AddFact|Import' -benchtime 5000x ./memory/sqlite
	$(GO) test -run '^$$' -bench '100k|LoCoMo' -benchtime 1x ./memory/sqlite
	./scripts/postgres-test run $(GO) test -run '^$$' -bench '100k' -benchtime 1x ./memory/postgres
	$(GO) test -run '^$$' -bench Rounds -benchtime 1x ./eval/rounds
	$(GO) test -run '^$$' -bench Workflows -benchtime 1x -timeout 60m ./eval/workflows
	$(GO) test -run '^$$' -bench TurnOverhead -benchtime 20x ./agent
	$(GO) test -run '^$$' -bench TrialOverhead -benchtime 1000x ./eval
	$(GO) test -run '^$$' -bench . ./optimize/bayes

## bench-campaign: the optimization game on all Suzuki pairs and Buchwald–Hartwig halides,
## 60 seeds × random, bayes-onehot, bayes and bayes+memory beside GPT-4 (about 7 minutes)
bench-campaign: build
	$(BIN) eval campaign

build:
	$(GO) build -o $(BIN) ./cmd/labmate

deps:
	./scripts/deps

vet:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }
	$(GO) vet ./...

clean:
	rm -rf bin
