# labmate — see README.md.
GO  ?= go
BIN := bin/labmate

.PHONY: run test build deps bench vet clean

## run: install dependencies, build labmate, list its kernels and run the streaming demo
run: deps build
	$(BIN) kernels
	$(BIN) exec examples/damped.m

## test: install dependencies, vet, and run every test with real interpreters
test: deps vet
	$(GO) test -race -count=1 -timeout 20m ./...

## bench: the kernel benchmarks (start, per-cell overhead, interrupt and line latency)
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 200x ./kernel/...

build:
	$(GO) build -o $(BIN) ./cmd/labmate

deps:
	./scripts/deps

vet:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }
	$(GO) vet ./...

clean:
	rm -rf bin
