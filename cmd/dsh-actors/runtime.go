package main

import (
	"errors"
	"io"
	"log/slog"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/fault"
)

// warnLogger logs warnings and errors as text to w (the subcommands' stderr).
func warnLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
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
// runtime.
func openRuntime(root string, opts dsh.Options, choice storeChoice) (*dsh.Runtime, error) {
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
	return rt, nil
}
