package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/pgstore"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
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
	store   io.Closer // a store the runtime does not own (Postgres), or nil
	sweeper *sweeper  // a node's sweeps of its store, or nil
}

// close stops the sweeps, closes the runtime (the drain, the child-first
// disposal, the flush), then the store it runs on when the runtime does
// not own it.
func (s *runtimeSet) close(ctx context.Context) error {
	s.sweeper.stop()
	err := s.rt.Close(ctx)
	if s.store != nil {
		err = errors.Join(err, s.store.Close())
	}
	return err
}

// modelFlag adds --model, the model that drives new agents (none: the
// keyless scripted agent).
func modelFlag(flags *flag.FlagSet) *string {
	return flags.String("model", "", "model name for DeepSeek's (or "+llm.EnvBaseURL+"'s) chat completions; needs "+llm.EnvAPIKey)
}

// modelAgents are the model agents of --model NAME over the DeepSeek
// endpoint the environment configures, nil without a model. A model
// without DEEPSEEK_API_KEY fails at once, naming the variable.
func modelAgents(model string) (*modelagent.Agents, error) {
	if model == "" {
		return nil, nil
	}
	return modelagent.New(modelagent.Config{Model: model})
}

// openRuntime opens the runtime with logger on the store root names: the
// JSONL store at root, or the Postgres store of a postgres:// URL; with
// model agents, every agent the runtime builds is one of them. On an
// error nothing stays open; otherwise the caller closes the set, which
// also drains the service. storeOpts apply to a JSONL store
// (--compression).
func openRuntime(root string, logger *slog.Logger, agents *modelagent.Agents, storeOpts ...session.Option) (*runtimeSet, error) {
	return openNodeRuntime(root, logger, agents, nodeFlags{}, storeOpts...)
}

// openNodeRuntime is openRuntime whose Postgres store's leases carry
// node's name and TTL (serve's --node and --lease-ttl); a named node also
// sweeps the store every TTL, taking over the sessions other nodes left
// with an expired lease.
func openNodeRuntime(root string, logger *slog.Logger, agents *modelagent.Agents, node nodeFlags, storeOpts ...session.Option) (*runtimeSet, error) {
	opts := dsh.Options{Dir: root, Logger: logger, StoreOptions: storeOpts}
	var pg *pgstore.Store
	if isPostgres(root) {
		if len(storeOpts) > 0 {
			return nil, errors.New("--compression applies to a JSONL store folder, not to a Postgres store")
		}
		var err error
		if pg, err = pgstore.Open(context.Background(), root, append(node.storeOptions(), pgstore.WithLogger(logger))...); err != nil {
			return nil, persistenceFailed("session persistence failed", err)
		}
		opts.Dir, opts.Store = "", pg
	} else if err := checkStoreRoot(root); err != nil {
		return nil, err
	}
	opts.ModelAgents = agents
	rt, err := dsh.Open(opts)
	if err != nil {
		if pg != nil {
			err = errors.Join(err, pg.Close())
		}
		return nil, err
	}
	set := &runtimeSet{dsh: rt, rt: rt.Actors(), query: rt.Query(), service: rt.Subagents()}
	if pg != nil {
		set.store = pg
		if node.name != "" {
			set.sweeper = startSweeper(pg, node.sweepEvery(), logger)
		}
	}
	return set, nil
}
