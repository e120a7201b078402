GO ?= go
PKGS := ./...

.PHONY: build test race bench lint run stress load screenshots

build:
	$(GO) build -o bin/dsh-actors ./cmd/dsh-actors

# The suite CI runs: vet, then every test with the race detector and goleak.
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 25m $(PKGS)

race: test

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(PKGS)

run: build
	./bin/dsh-actors serve

# Bigger stress loops than the default suite runs, then the multi-process
# scenarios (kill -9, SIGSTOP, rolling restart) with 20 s of load around
# each fault, then the child-first stress loop with two CPU hogs beside it
# (10 runs, each bounded).
stress: build
	$(GO) test -race -count=1 -timeout 60m -short=false ./tests/... -args -stress.big
	$(GO) test -race -count=1 -timeout 30m -run TestNodes -v ./internal/multiproc/ -args -multiproc.load 20s
	./tests/stress_under_load.sh bin/dsh-actors 10

# 64 clients against `serve` on loopback for 10 s (the default suite runs a
# short version).
load:
	$(GO) test -count=1 -run TestServeUnderLoad -v ./tests/ -args -load 10s

# The browser test, keeping one screenshot per step under out/.
screenshots:
	mkdir -p out && $(GO) test -count=1 -run TestBrowser -artifacts -outputdir out ./host/
