package main

import (
	"io"
	"log/slog"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// warnLogger logs warnings and errors as text to w (the subcommands' stderr).
func warnLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// runtimeSet is what the long-running subcommands (demo, serve) run on: the
// runtime over a JSONL store, the query over its sessions and the subagent
// service with the spawn and fork providers registered.
type runtimeSet struct {
	dsh     *dsh.Runtime
	rt      *actors.Runtime
	query   *query.Query
	service *subagent.Service
}

// openRuntime opens the runtime on the JSONL store at root with logger. On
// an error nothing stays open; otherwise the caller closes rt, which also
// drains the service.
func openRuntime(root string, logger *slog.Logger) (*runtimeSet, error) {
	if err := checkStoreRoot(root); err != nil {
		return nil, err
	}
	rt, err := dsh.Open(dsh.Options{Dir: root, Logger: logger})
	if err != nil {
		return nil, err
	}
	return &runtimeSet{dsh: rt, rt: rt.Actors(), query: rt.Query(), service: rt.Subagents()}, nil
}
