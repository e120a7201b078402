package main

import (
	"context"
	"io"
	"log/slog"

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
	rt      *actors.Runtime
	query   *query.Query
	service *subagent.Service
}

// openRuntime opens the runtime on the JSONL store at root with logger
// (which the subagent service logs to as well) and builds its query and
// service. On an error nothing stays open; otherwise the caller closes
// rt, which also drains the service.
func openRuntime(root string, logger *slog.Logger) (*runtimeSet, error) {
	rt, err := actors.New(actors.Options{Root: root, Logger: logger})
	if err != nil { // opening the store is New's only failure
		return nil, persistenceFailed("session persistence failed", err)
	}
	q := query.New(rt.Sessions())
	service := subagent.New(rt, q, subagent.WithLogger(logger))
	for _, provider := range []subagent.Provider{subagent.NewSpawn(rt), subagent.NewFork(rt)} {
		if _, err := service.RegisterProvider(provider); err != nil {
			_ = rt.Close(context.Background())
			return nil, err
		}
	}
	return &runtimeSet{rt: rt, query: q, service: service}, nil
}
