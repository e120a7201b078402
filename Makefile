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

# Bigger stress loops than the default suite runs.
stress:
	$(GO) test -race -count=1 -timeout 60m -short=false ./tests/... -args -stress.big

# 64 clients against `serve` on loopback for 10 s (skipped by the default suite).
load:
	$(GO) test -count=1 -run TestServeUnderLoad -v ./tests/ -args -load 10s

# The browser test, keeping one screenshot per step under out/.
screenshots:
	mkdir -p out && $(GO) test -count=1 -run TestBrowser -artifacts -outputdir out ./host/
