GO ?= go
PKGS := ./...

.PHONY: build test race bench lint run stress

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
