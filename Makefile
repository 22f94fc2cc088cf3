# labmate — see README.md.
GO  ?= go
BIN := bin/labmate

.PHONY: run test build deps bench vet clean

## run: install dependencies, build labmate and start the server on 127.0.0.1:7878
run: deps build
	$(BIN) kernels
	$(BIN) serve

## test: install dependencies, vet, and run every test with real interpreters and a throw-away
## PostgreSQL (scripts/postgres-test starts it, exports LABMATE_TEST_POSTGRES, and stops it); the
## Octave retrieval-quality test runs on its own without -race, under which indexing takes minutes
test: deps vet
	./scripts/postgres-test run $(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run TestOctaveRetrieval -v ./knowledge/sqlite
	$(GO) test -run '^$$' -fuzz FuzzDecodeClient -fuzztime 100000x ./server

## bench: kernels (start, per-cell overhead, interrupt and line latency), perception's cost
## per observation, the print-to-interrupt latency of the Hot-Fix, one streamed model call
## through each LLM adapter over loopback, memory (ingest, search latency and size at 100,000
## facts on SQLite and PostgreSQL, LoCoMo recall), the agent's overhead per turn, documentation
## search p50/p99 on the installed Octave's help (and the time to index it), fetch+clean throughput
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 200x ./kernel/... ./operation
	$(GO) test -run '^$$' -bench . -benchmem ./perception
	$(GO) test -run '^$$' -bench . -benchtime 1x ./server
	$(GO) test -run '^$$' -bench . ./protocol/sqlite
	$(GO) test -run '^$$' -bench . -benchmem ./llm/openai ./llm/anthropic
	$(GO) test -run '^$$' -bench 'AddFact|Import' -benchtime 5000x ./memory/sqlite
	$(GO) test -run '^$$' -bench '100k|LoCoMo' -benchtime 1x ./memory/sqlite
	./scripts/postgres-test run $(GO) test -run '^$$' -bench '100k' -benchtime 1x ./memory/postgres
	$(GO) test -run '^$$' -bench TurnOverhead -benchtime 20x ./agent
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./knowledge/sqlite
	$(GO) test -run '^$$' -bench FetchClean -benchtime 5x ./knowledge/fetch

build:
	$(GO) build -o $(BIN) ./cmd/labmate

deps:
	./scripts/deps

vet:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }
	$(GO) vet ./...

clean:
	rm -rf bin
