# labmate — see README.md.
GO  ?= go
BIN := bin/labmate

.PHONY: run test build deps bench bench-campaign vet clean

## run: install dependencies, build labmate and start the server on 127.0.0.1:7878
run: deps build
	$(BIN) kernels
	$(BIN) serve

## test: install dependencies, vet, and run every test with real interpreters
test: deps vet
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -run '^$$' -fuzz FuzzDecodeClient -fuzztime 100000x ./server

## bench: kernels (start, per-cell overhead, interrupt and line latency), perception's cost
## per observation, and the print-to-interrupt latency of the Hot-Fix
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 200x ./kernel/... ./operation
	$(GO) test -run '^$$' -bench . -benchmem ./perception
	$(GO) test -run '^$$' -bench . -benchtime 1x ./server
	$(GO) test -run '^$$' -bench . ./protocol/sqlite
	$(GO) test -run '^$$' -bench . ./optimize/bayes

## bench-campaign: the optimization game on all Suzuki pairs and Buchwald–Hartwig halides,
## 10 seeds × random, bayes-onehot, bayes and bayes+memory beside GPT-4 (several minutes)
bench-campaign: build
	$(BIN) bench campaign

build:
	$(GO) build -o $(BIN) ./cmd/labmate

deps:
	./scripts/deps

vet:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }
	$(GO) vet ./...

clean:
	rm -rf bin
