package dsh

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/pgstore"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// Options configure Open. The zero value is a memory-only runtime running
// the scripted agent and logging nothing (memory-only sessions cannot hold
// continuable children: Spawn then fails with PERSISTENCE_UNAVAILABLE).
type Options struct {
	// Dir is the JSONL session store folder, which Open makes (with the
	// folders above it) when missing, or a postgres:// (postgresql://)
	// URL of the Postgres store, whose schema Open creates when missing
	// and which several processes may share; "" keeps sessions in memory.
	// A session is live in one runtime at a time: another runtime on the
	// same store, in this process or another, is refused it with an error
	// matching fault.LeaseHeld.
	Dir string
	// Compression is the encoding of the logs of the JSONL store at Dir:
	// "zstd" (Zstandard frames, the original harness's default) or "none"
	// (plain JSONL); "" keeps an existing store's, Zstandard for a new one.
	// Naming the other encoding than an existing store's fails Open, as
	// does another value.
	Compression string
	// DurableAdmission makes the JSONL store at Dir acknowledge a message
	// to a continuable child or a top-level session only once it is
	// fsynced to the session's inbox file, and run what a crash left unrun
	// when the session resumes. The store keeps the mode once given: every
	// later runtime on it admits durably. A Postgres store always does.
	DurableAdmission bool
	// NoSync makes the JSONL store at Dir skip every fsync: it
	// acknowledges writes a crash may lose. It is for measurements whose
	// durability must cost nothing.
	NoSync bool
	// NewAgent builds every agent the runtime starts: top-level agents
	// and their continuable children alike (a child's
	// agent.Options.ParentSession is its parent's id, a top-level
	// agent's is empty), and every agent it resumes whose route is
	// Provider and Model; nil means agent.Scripted. A stored child is
	// rebuilt by the factory of the route its descriptor names, with the
	// persona and tool filter it names: NewAgent for this route,
	// agent.Scripted for "scripted", ModelAgents for their provider. A
	// route none of them builds is refused with fault.NotResumable naming
	// it, never built by another.
	NewAgent agent.Factory
	// Provider and Model are the route of the agents the runtime starts,
	// which NewAgent builds (empty: "scripted").
	Provider, Model string
	// ModelAgents build every stored agent of their provider, whatever
	// model it names. When their Config names a Model they are also the
	// route of every agent started, instead of NewAgent (which must then
	// be nil, as Provider and Model must be empty). Open binds them to the
	// runtime and its subagent service.
	ModelAgents *modelagent.Agents
	// ACPAgents are registered as subagent providers under their names,
	// beside "spawn" and "fork" (Delegate runs one-shot children through
	// them); a name taken fails Open.
	ACPAgents []ACPAgent
	// Logger receives the runtime's warnings; nil discards them.
	Logger *slog.Logger
	// Workers sizes the dispatcher pool; 0 means GOMAXPROCS.
	Workers int
	// Node names this runtime in the leases of the Postgres store Open
	// opens for Dir, as other processes see them (sessions.owner); ""
	// means host:pid:random.
	Node string
	// LeaseTTL is how long a lease of the Postgres store Open opens for
	// Dir outlives this runtime's last renewal (it renews every third of
	// it); 0 means 10 s, and less than 100 ms is refused. On a store
	// shared by several processes the runtime also sweeps once per
	// LeaseTTL: it takes over the sessions whose holder died (its lease
	// expired more than a LeaseTTL ago), closing the turn each left open,
	// and runs the messages acknowledged for them that no one runs, so a
	// child of a dead process gets its pending messages run here within
	// about two LeaseTTLs, without another Send.
	LeaseTTL time.Duration
	// NoIndex makes Children, Search and Sessions read the logs
	// themselves. Otherwise, on a JSONL store folder they read through its
	// derived SQLite index (the file session-query.db in Dir), which the
	// runtime opens on first use, rebuilds when missing or damaged and
	// brings up to date on every use, and on a Postgres store through its
	// own queries. Both answer exactly as reading the logs does.
	NoIndex bool
}

// minLeaseTTL is the shortest Options.LeaseTTL: a lease is renewed every
// third of it, and a renewal is one round trip to the database.
const minLeaseTTL = 100 * time.Millisecond

// defaultLeaseTTL is the lease TTL, and so the sweep interval, when
// Options.LeaseTTL is 0.
const defaultLeaseTTL = 10 * time.Second

// Runtime is an opened dsh-actors runtime. Its methods are safe for
// concurrent use.
type Runtime struct {
	actors    *actors.Runtime
	query     *query.Query
	subagents *subagent.Service
	// postgres is the Postgres store Open opened for Options.Dir, closed
	// after the actor runtime; nil otherwise.
	postgres   *pgstore.Store
	closeStore sync.Once
	sweeper    *sweeper // nil unless the store is shared
	// prompts serializes, per top-level session, a prompt's admission and
	// delivery with a resume's or a wake's delivery of the durable inbox,
	// so that no prompt is handed to the agent twice (handed).
	prompts stripedLock
	// store is the durable inbox and lease check prompts use, looked up
	// once at Open.
	store  promptStore
	handed handedPrompts
	wakes  topLevelWakes
	// fullLogs holds the top-level sessions whose log a full disk failed
	// (they left the runtime): a prompt resumes one only once the store's
	// disk has room again (roomOnDisk; nil: diskHasRoom).
	fullLogs   fullLogSet
	roomOnDisk func() bool
	index      *storeIndex
	// provider and model are the route new top-level agents start with
	// (Options.Provider and Model, or the model agents'); empty for the
	// scripted agent.
	provider, model string
}

// Route returns the provider and model of the agents the runtime starts
// (Options.Provider and Model, or those of model agents naming a model):
// both empty for the scripted agent. It does not block.
func (r *Runtime) Route() (provider, model string) { return r.provider, r.model }

// Open opens the store, starts the actor runtime and binds its subagent
// service with the spawn and fork providers. On an error nothing stays
// open. It blocks only on opening the store.
func Open(opts Options) (*Runtime, error) { return openWith(opts) }

// openWith is Open whose JSONL store also takes extra options (a test's
// fault-injecting file system).
func openWith(opts Options, extra ...session.Option) (*Runtime, error) {
	if err := useModelAgents(&opts); err != nil {
		return nil, err
	}
	if err := checkLeaseOptions(opts); err != nil {
		return nil, err
	}
	aopts := actors.Options{Logger: opts.Logger, NewAgent: agentRoutes(opts), Workers: opts.Workers,
		Provider: opts.Provider, Model: opts.Model}
	pg, err := chooseStore(opts, extra, &aopts)
	if err != nil {
		return nil, err
	}
	rt, err := actors.New(aopts)
	if err != nil {
		return nil, errors.Join(err, closeStore(pg))
	}
	if err := checkEncoding(rt.Sessions().Store(), opts.Compression); err != nil {
		return nil, errors.Join(err, rt.Close(context.Background()), closeStore(pg))
	}
	r := &Runtime{actors: rt, query: query.New(rt.Sessions()), postgres: pg, store: promptStoreOf(rt.Sessions().Store()),
		provider: opts.Provider, model: opts.Model}
	r.index = newStoreIndex(indexRoot(opts), opts.NoIndex, rt.Sessions())
	err = r.bindSubagents(opts.Logger)
	if err == nil {
		err = r.registerACPAgents(opts.ACPAgents)
	}
	if err != nil {
		return nil, errors.Join(err, rt.Close(context.Background()), closeStore(pg))
	}
	if opts.ModelAgents != nil {
		opts.ModelAgents.Bind(r.actors, r.subagents)
	}
	r.sweeper = startSweeper(rt.Sessions().Store(), cmp.Or(opts.LeaseTTL, defaultLeaseTTL), r.actors.Logger())
	r.startWakes()
	return r, nil
}

// chooseStore sets the store of aopts from opts: the Postgres store Dir
// names, which it opens and returns, else the JSONL store at Dir (its
// folder made, extra added to its options), else none (memory).
func chooseStore(opts Options, extra []session.Option, aopts *actors.Options) (*pgstore.Store, error) {
	jsonlOpts, err := jsonlOptions(opts)
	if err != nil {
		return nil, err
	}
	pg, err := openPostgres(opts)
	switch {
	case err != nil:
		return nil, err
	case pg != nil:
		aopts.Sessions = session.NewSessions(pg)
	case opts.Dir != "":
		if err := makeStoreDir(opts.Dir); err != nil {
			return nil, err
		}
		aopts.Root, aopts.StoreOptions = opts.Dir, append(jsonlOpts, extra...)
	}
	return pg, nil
}

// jsonlOptions are the JSONL store options opts' Compression,
// DurableAdmission and NoSync name. They are refused where no JSONL store
// is opened (no Dir, or a Postgres one), and an unknown compression is
// refused naming it.
func jsonlOptions(opts Options) ([]session.Option, error) {
	var out []session.Option
	switch opts.Compression {
	case "": // an existing store keeps its encoding; a new one gets the original's default
		out = append(out, session.WithNewStoreCompression(session.CompressionZstd))
	case "zstd":
		out = append(out, session.WithCompression(session.CompressionZstd))
	case "none":
		out = append(out, session.WithCompression(session.CompressionNone))
	default:
		return nil, fault.New(fault.InvalidRequest, fmt.Sprintf(`dsh: Options.Compression must be "zstd" or "none", got %q`, opts.Compression), nil)
	}
	if opts.DurableAdmission {
		out = append(out, session.WithDurableAdmission())
	}
	if opts.NoSync {
		out = append(out, session.WithFS(sessionfs.NoSync{}))
	}
	if (opts.Compression != "" || opts.DurableAdmission || opts.NoSync) && (opts.Dir == "" || isPostgresURL(opts.Dir)) {
		return nil, fault.New(fault.InvalidRequest, "dsh: Options.Compression, DurableAdmission and NoSync configure the JSONL store: set Dir to its folder", nil)
	}
	return out, nil
}

// checkEncoding fails when compression named the other encoding than the
// logs the JSONL store already holds (every later read or write of them
// would be refused), with the store's message and the persistence code.
// It reads the root's folders once; with no compression, or another
// store, it does nothing.
func checkEncoding(store session.Store, compression string) error {
	jsonl, ok := store.(*session.JSONL)
	if compression == "" || !ok {
		return nil
	}
	if _, err := jsonl.Compression(); err != nil {
		return fault.New(fault.QueryPersistenceFailed, "session persistence failed: "+err.Error(), err)
	}
	return nil
}

// checkLeaseOptions refuses a LeaseTTL below minLeaseTTL, and Node or
// LeaseTTL where Open opens no Postgres store.
func checkLeaseOptions(opts Options) error {
	if opts.LeaseTTL != 0 && opts.LeaseTTL < minLeaseTTL {
		return fault.New(fault.InvalidRequest, fmt.Sprintf("dsh: Options.LeaseTTL must be at least %s, got %s", minLeaseTTL, opts.LeaseTTL), nil)
	}
	if (opts.Node != "" || opts.LeaseTTL != 0) && !isPostgresURL(opts.Dir) {
		return fault.New(fault.InvalidRequest, "dsh: Options.Node and LeaseTTL name the leases of a Postgres store: set Dir to its postgres:// URL", nil)
	}
	return nil
}

// isPostgresURL reports whether dir names a Postgres store.
func isPostgresURL(dir string) bool {
	return strings.HasPrefix(dir, "postgres://") || strings.HasPrefix(dir, "postgresql://")
}

// openPostgres opens the Postgres store opts.Dir names, if it names one;
// it blocks until the schema is there.
func openPostgres(opts Options) (*pgstore.Store, error) {
	if !isPostgresURL(opts.Dir) {
		return nil, nil
	}
	pgOpts := []pgstore.Option{pgstore.WithLogger(opts.Logger), pgstore.WithTTL(opts.LeaseTTL)}
	if opts.Node != "" {
		pgOpts = append(pgOpts, pgstore.WithOwner(opts.Node))
	}
	pg, err := pgstore.Open(context.Background(), opts.Dir, pgOpts...)
	if err != nil {
		return nil, openFailed(err)
	}
	return pg, nil
}

// makeStoreDir makes the JSONL store folder dir and the missing folders
// above it, each one durable (the folder holding it synced), as the store
// makes the folders below it. It fails with PERSISTENCE_UNAVAILABLE naming
// dir when dir cannot be a folder.
func makeStoreDir(dir string) error {
	if err := mkdirDurably(filepath.Clean(dir)); err != nil {
		return fault.New(fault.PersistenceUnavailable,
			fmt.Sprintf("dsh: cannot make the session store folder %q: %v", dir, err), err)
	}
	return nil
}

// mkdirDurably makes dir and the missing folders above it, top-down,
// syncing each new folder's parent so that its entry survives a crash.
func mkdirDurably(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case err == nil && info.IsDir():
		return nil
	case err == nil:
		return &fs.PathError{Op: "open", Path: dir, Err: errors.New("not a directory")}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	up := filepath.Dir(dir)
	if up != dir {
		if err := mkdirDurably(up); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(up)
}

// syncDir fsyncs the folder dir.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// closeStore closes pg when Open opened one.
func closeStore(pg *pgstore.Store) error {
	if pg == nil {
		return nil
	}
	return pg.Close()
}

// useModelAgents makes opts' model agents its agent factory and route
// when they name a model; it fails when opts also sets either.
func useModelAgents(opts *Options) error {
	if opts.ModelAgents == nil {
		return nil
	}
	provider, model := opts.ModelAgents.Route()
	if model == "" { // they only rebuild stored agents of their provider
		return nil
	}
	if opts.NewAgent != nil || opts.Provider != "" || opts.Model != "" {
		return errors.New("dsh: Options.ModelAgents replaces NewAgent, Provider and Model: set none of them")
	}
	opts.NewAgent = opts.ModelAgents.Factory
	opts.Provider, opts.Model = provider, model
	return nil
}

func (r *Runtime) bindSubagents(logger *slog.Logger) error {
	var opts []subagent.Option
	if logger != nil {
		opts = append(opts, subagent.WithLogger(logger))
	}
	svc, err := subagent.New(r.actors, r.query, opts...)
	if err != nil {
		return err
	}
	r.subagents = svc
	for _, p := range []subagent.Provider{subagent.NewSpawn(r.actors), subagent.NewFork(r.actors)} {
		if _, err := svc.RegisterProvider(p); err != nil {
			return err
		}
	}
	return nil
}

// StartAgent publishes a top-level agent over a new session named id (a
// random uuid when empty), built by Options.NewAgent, and returns its
// handle: the parent that Spawn, Send and Drain take. It blocks until the
// agent is published; an id that is live already fails with
// fault.AgentExists, and one that is stored with fault.AgentStartFailed
// (a stored agent is ResumeAgent's).
func (r *Runtime) StartAgent(ctx context.Context, id string) (*Handle, error) {
	return handleOf(r.actors.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: id}}))
}

// ResumeAgent publishes the stored top-level agent id again, built by
// Options.NewAgent over its log (after a restart, say); its continuable
// children cold-resume on their next Send. The handles of the closed
// runtime are stale: Spawn and Send take the one ResumeAgent returns.
// It blocks until the agent is published and fails with fault.AgentExists
// when id is live already, and with fault.AgentStartFailed when it cannot
// be resumed (the message says why: no stored session under id, or, also
// matching fault.LeaseHeld, another runtime holds it live).
func (r *Runtime) ResumeAgent(ctx context.Context, id string) (*Handle, error) {
	return handleOf(r.actors.ResumeAgent(ctx, id, parent.Spec{}))
}

// OpenAgent is start-or-resume in one call: it resumes the stored
// top-level agent id (as ResumeAgent) and, when no session id is stored,
// starts it over a new session (as StartAgent). It blocks until the agent
// is published; an id live here already fails with fault.AgentExists, and
// a stored one that cannot be resumed as ResumeAgent says.
func (r *Runtime) OpenAgent(ctx context.Context, id string) (*Handle, error) {
	h, err := r.ResumeAgent(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		return r.StartAgent(ctx, id)
	}
	return h, err
}

// Spawn starts a continuable child of the exact live agent p through the
// "spawn" provider with a durable label and its first prompt; it returns
// the child's id at inbox acceptance (the turn runs later), blocking until
// then. The child's agent is built by Options.NewAgent. It fails with
// fault.Unauthorized when p is nil or not the live agent it was (a handle
// from before a restart), fault.DescriptorInvalid for an empty label,
// fault.PersistenceUnavailable on a memory-only runtime, fault.Draining
// below a drained parent, fault.Closed and fault.Cancelled.
func (r *Runtime) Spawn(ctx context.Context, p *Handle, label string, prompt []event.Block) (childID string, err error) {
	if err := needParent("Spawn", p); err != nil {
		return "", err
	}
	started, err := r.subagents.StartContinuable(ctx, manager.StartSpec{
		Provider: subagent.SpawnName, Label: label,
		Request: manager.Request{Prompt: prompt, Parent: p.h},
	})
	return started.ChildID, err
}

// Send delivers content from p to its continuable child childID as the
// child's next FIFO turn (cold-resuming it when it settled) and returns the
// accepted MessageID. It blocks until acceptance. Only the child's exact
// live direct parent may send: another agent, a stale handle or nil is
// fault.Unauthorized; a childID that names no continuable child is
// fault.NotResumable; below a drained parent it is fault.Draining.
func (r *Runtime) Send(ctx context.Context, p *Handle, childID string, content []event.Block) (string, error) {
	return r.SendFrom(ctx, p, childID, content, event.Source{Kind: event.SourceUser})
}

// WaitChild returns the end (stop reason, last assistant message,
// discarded follow-ups) of childID's latest epoch with ok true, without
// polling. When an epoch of childID is resident it blocks until that
// epoch ends (its turns ran, it owns no undisposed child and it was
// disposed). Otherwise it returns at once: the end of the most recent
// epoch of childID that ended in this runtime, even one that ended before
// the call (a short turn can end before the Spawn or Send that started it
// returns), so WaitChild right after Spawn or Send gets that epoch's end.
// A later epoch's end replaces it. ok is false at once when no epoch of
// childID ended in this runtime (it ran in an earlier one, or the id names
// no child: Children tells them apart), when its parent was disposed since
// (the end is kept only while an agent with the child's parent id is live
// here), or when the resident epoch was rolled back before it started. A
// cancelled ctx is fault.Cancelled.
func (r *Runtime) WaitChild(ctx context.Context, childID string) (end agent.ChildEnd, ok bool, err error) {
	info, ok, err := r.subagents.WaitChild(ctx, childID)
	return agent.ChildEnd{StopReason: info.StopReason, LastAssistantMessage: info.LastAssistantMessage,
		DiscardedFollowups: info.DiscardedFollowups}, ok, err
}

// Drain closes admission below the exact live parents and disposes their
// continuable descendants child-first; agents outside those subtrees keep
// running. Until a parent leaves the runtime, a Spawn or Send below it
// fails with fault.Draining. It blocks until the descendants are
// disposed; on a closed runtime it fails with fault.Closed.
func (r *Runtime) Drain(ctx context.Context, parents ...*Handle) error {
	if err := r.actors.Err(); err != nil {
		return err
	}
	live := make([]*parent.Handle, len(parents))
	for i, p := range parents {
		live[i] = parentOf(p)
	}
	return r.subagents.DrainContinuableDescendants(ctx, live)
}

// needParent refuses a nil parent handle for op, saying what is missing,
// and for any op but a send one of an agent another process runs.
func needParent(op string, p *Handle) error {
	if p == nil {
		return fault.New(fault.Unauthorized, "dsh: "+op+
			" needs the handle of a live parent agent (from StartAgent or ResumeAgent); got a nil parent", nil)
	}
	if p.remote != nil && op != "SendFrom" {
		return fault.New(fault.Unauthorized, fmt.Sprintf("dsh: %s needs an agent live in this runtime; %q runs in another process", op, p.remote.id), nil)
	}
	return nil
}

// Shutdown closes the runtime gracefully, as net/http's Server.Shutdown
// does: admission stops at once (every later call fails with an error
// matching fault.Closed), the turns running and the messages already
// accepted run to their end within ctx, then every agent is disposed
// child-first and every session flushed. When ctx ends first it returns
// ctx's error with the turns still running; Close then ends them.
func (r *Runtime) Shutdown(ctx context.Context) error {
	r.sweeper.stop()
	r.stopWakes()
	if err := r.actors.Shutdown(ctx); err != nil {
		return err
	}
	return errors.Join(r.index.close(), r.closePostgres())
}

// Close closes the runtime at once: admission stops, running turns are
// cancelled, accepted messages not yet run are discarded, every agent is
// disposed child-first and every session flushed. It blocks until then;
// a second Close returns nil.
func (r *Runtime) Close() error {
	r.sweeper.stop()
	r.stopWakes()
	return errors.Join(r.actors.Close(context.Background()), r.index.close(), r.closePostgres())
}

// closePostgres closes the Postgres store Open opened, once.
func (r *Runtime) closePostgres() error {
	var err error
	r.closeStore.Do(func() { err = closeStore(r.postgres) })
	return err
}
