package main

import (
	"context"
	"io"
	"os"

	dsh "github.com/dsh-actors/dsh-actors"
)

const acpUsage = `usage: dsh-actors acp ` + modelUsage + ` [--store DIR]`

// runACP serves one dsh agent per ACP session over stdio (JSON-RPC lines on
// stdin and stdout; diagnostics on stderr) until stdin closes or the first
// SIGINT/SIGTERM, then closes the runtime: running turns are cancelled, every
// agent is disposed child-first and every session flushed. It exits 0 when
// the runtime closed cleanly, 1 otherwise.
func runACP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return acpCommand(ctx, args, os.Stdin, stdout, stderr)
}

// acpCommand is runACP reading the client's messages from stdin.
func acpCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := newFlags("acp")
	store, model := storeFlag(flags), addModelFlags(flags)
	if err := parseFlagsOnly(flags, args); err != nil {
		return usageError(stderr, acpUsage, flags, err)
	}
	logger := warnLogger(stderr)
	agents, err := model.agents(logger, nil)
	if err != nil {
		return failure(stderr, "acp", err)
	}
	rt, err := dsh.Open(dsh.Options{Dir: *store, Logger: logger, ModelAgents: agents})
	if err != nil {
		return failure(stderr, "acp", err)
	}
	serveACP(ctx, rt, stdin, stdout, logger)
	if err := rt.Close(); err != nil {
		return failure(stderr, "acp", err)
	}
	return 0
}
