package main

import (
	"errors"
	"io"
	"log/slog"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/fault"
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

// close closes the runtime at once (running turns cancelled, every agent
// disposed child-first, every session flushed), then the store Open
// opened for it.
func (s *runtimeSet) close() error {
	return s.dsh.Close()
}

// storeChoice is how a subcommand's JSONL store is opened: its
// --compression and serve's --durable-admission.
type storeChoice struct {
	compression string
	durable     bool
}

// openRuntime opens the runtime of opts (its logger, model agents, ACP
// agents and lease options) on the store root names: the JSONL store at
// root, opened as choice says, or the Postgres store of a postgres://
// URL. On an error nothing stays open; otherwise the caller closes the
// set, which also drains the service.
func openRuntime(root string, opts dsh.Options, choice storeChoice) (*runtimeSet, error) {
	opts.Dir = root
	if isPostgres(root) && choice.compression != "" {
		return nil, errors.New("--compression applies to a JSONL store folder, not to a Postgres store")
	}
	if !isPostgres(root) {
		if err := checkStoreRoot(root); err != nil {
			return nil, err
		}
		opts.Compression, opts.DurableAdmission = choice.compression, choice.durable
	}
	rt, err := dsh.Open(opts)
	if err != nil {
		if isPostgres(root) && errors.Is(err, fault.PersistenceUnavailable) {
			err = persistenceFailed("session persistence failed", errors.Unwrap(err))
		}
		return nil, err
	}
	return &runtimeSet{dsh: rt, rt: rt.Actors(), query: rt.Query(), service: rt.Subagents()}, nil
}
