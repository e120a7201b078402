package manager

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/pgtest"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// cluster is the private PostgreSQL server of the tests that run on both
// stores; pgtest.Main checks for leaked goroutines too.
var cluster *pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }

var bg = context.Background()

// fixture is a runtime over a JSONL store in a temporary folder, a manager
// whose provider "spawn" seeds nothing, a lifecycle recorder and a
// top-level parent agent.
type fixture struct {
	t       *testing.T
	root    string
	store   *failingStore
	rt      *actors.Runtime
	m       *Manager
	rec     *recorder
	gates   *gates
	logs    *testkit.SyncBuffer
	parent  *parent.Handle
	options *optionsLog
}

type fixtureConfig struct {
	memoryOnly bool
	root       string
	checkpoint checkpointFunc
	prepare    prepareFunc
	fs         sessionfs.FS
	store      session.Store
	resume     bool
	topLevel   string // the top-level parent's id ("parent" when empty)
}

type option func(*fixtureConfig)

func memoryOnly() option { return func(c *fixtureConfig) { c.memoryOnly = true } }

func withCheckpoint(fn checkpointFunc) option { return func(c *fixtureConfig) { c.checkpoint = fn } }

func withPrepare(fn prepareFunc) option { return func(c *fixtureConfig) { c.prepare = fn } }

// withStore runs the fixture on store (closed by its opener) instead of
// a JSONL store of its own.
func withStore(store session.Store) option { return func(c *fixtureConfig) { c.store = store } }

// withTopLevel names the top-level parent id instead of "parent" (a
// second process on the same store).
func withTopLevel(id string) option { return func(c *fixtureConfig) { c.topLevel = id } }

// resumingParent resumes the stored top-level "parent" instead of
// creating it (a restarted process over the same store).
func resumingParent() option { return func(c *fixtureConfig) { c.resume = true } }

// withFS puts the store on fsys (e.g. a *faultfs.FS).
func WithFS(fsys sessionfs.FS) option { return func(c *fixtureConfig) { c.fs = fsys } }

func newFixture(t *testing.T, opts ...option) *fixture {
	t.Helper()
	cfg := fixtureConfig{root: t.TempDir()}
	for _, o := range opts {
		o(&cfg)
	}
	f := &fixture{t: t, root: cfg.root, rec: newRecorder(), gates: newGates(t), logs: &testkit.SyncBuffer{}, options: &optionsLog{}}
	sessions := session.NewSessions(cfg.store)
	if !cfg.memoryOnly && cfg.store == nil {
		var storeOpts []session.Option
		if cfg.fs != nil {
			storeOpts = append(storeOpts, session.WithFS(cfg.fs))
		}
		jsonl, err := session.OpenJSONL(cfg.root, storeOpts...)
		require.NoError(t, err)
		f.store = &failingStore{Store: jsonl}
		sessions = session.NewSessions(f.store)
	}
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rt, err := actors.New(actors.Options{Sessions: sessions, Logger: logger, NewAgent: f.newAgent, Workers: 2})
	require.NoError(t, err)
	f.rt = rt
	prepare := cfg.prepare
	if prepare == nil {
		prepare = spawnOnly
	}
	f.m, err = New(Options{Runtime: rt, Prepare: prepare, Started: f.rec.Started, Ended: f.rec.Ended, checkpoint: cfg.checkpoint,
		middleware: []actor.ReceiverMiddleware{probing}})
	require.NoError(t, err)
	deadLetters := recordDeadLetters(rt)
	if cfg.resume {
		f.parent, err = rt.ResumeAgent(testkit.Context(t), "parent", parent.Spec{})
		require.NoError(t, err)
	} else {
		f.parent = f.startTopLevel(cmp.Or(cfg.topLevel, "parent"))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, testkit.WaitLimit)
		defer cancel()
		require.NoError(t, rt.Close(ctx), "the runtime's close at the test's end")
		require.Empty(t, deadLetters(), "messages sent to actors that had stopped (each starts protoactor's dead-letter throttle timer)")
		if f.store != nil {
			require.NoError(t, f.store.Close())
		}
	})
	return f
}

// spawnOnly prepares "spawn" (no seed) and "retired"; anything else has no
// provider.
func spawnOnly(_ context.Context, provider, _ string, _ *parent.Handle) ([]session.Event, error) {
	switch provider {
	case "spawn", "retired":
		return nil, nil
	}
	return nil, NoProvider(provider)
}

func (f *fixture) startTopLevel(id string) *parent.Handle {
	f.t.Helper()
	h, err := f.rt.StartAgent(testkit.Context(f.t), parent.CreateSpec{Header: session.Header{ID: id}})
	require.NoError(f.t, err, "the start of top-level agent %s", id)
	return h
}

func (f *fixture) spec(p *parent.Handle, prompt string) StartSpec {
	return StartSpec{Provider: "spawn", Label: "child task", Request: Request{Prompt: event.Text(prompt), Parent: p}}
}

// start starts a continuable child of p with prompt and returns its id.
func (f *fixture) start(p *parent.Handle, prompt string) string {
	f.t.Helper()
	s, err := f.m.StartContinuable(testkit.Context(f.t), f.spec(p, prompt))
	require.NoError(f.t, err, "start of a child of %s", p.ID())
	return s.ChildID
}

func (f *fixture) followup(p *parent.Handle, childID, text string) string {
	f.t.Helper()
	id, err := f.m.Followup(testkit.Context(f.t), p, childID, event.Text(text), event.Source{Kind: "user"})
	require.NoError(f.t, err, "follow-up from %s to %s", p.ID(), childID)
	return id
}

// settled waits until the child's nth epoch ended and returns that end;
// it fails the test, naming the epoch, when that takes longer than
// endDeadline.
func (f *fixture) settled(childID string, n int) RunEndInfo {
	f.t.Helper()
	end, ok := f.rec.waitEnd(childID, n, time.After(endDeadline))
	if !ok {
		edges, _, _ := f.rec.snapshot()
		f.t.Fatalf("epoch %d of child %s did not end within %s; lifecycle edges so far: %v; warnings logged:\n%s", n, childID, endDeadline, edges, f.logs.String())
	}
	return end
}

// endDeadline bounds a test's wait for an epoch's end: far beyond any
// epoch the tests run, so only a lost end reaches it.
const endDeadline = time.Minute

// events returns the child's log: live when it is live, else stored.
func (f *fixture) events(id string) []session.Event {
	f.t.Helper()
	if live := f.rt.Sessions().Get(id); live != nil {
		return live.Events()
	}
	log, err := f.rt.Sessions().Store().Inspect(bg, id)
	require.NoError(f.t, err)
	return log.Events
}

func (f *fixture) header(id string) session.Header {
	f.t.Helper()
	log, err := f.store.Inspect(bg, id)
	require.NoError(f.t, err)
	return log.Header
}

// userTexts are the texts of the user/message events of id's log.
func (f *fixture) userTexts(id string) []string {
	f.t.Helper()
	var texts []string
	for _, e := range f.events(id) {
		if e.Type != "user/message" {
			continue
		}
		var msg event.UserMessage
		require.NoError(f.t, json.Unmarshal(e.Data, &msg))
		texts = append(texts, msg.Content[0].Text)
	}
	return texts
}

func (f *fixture) count(id, typ string) int {
	n := 0
	for _, e := range f.events(id) {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// waitingChild starts a child of p whose first turn starts a grandchild
// that waits at gate "g", and returns once the child is idle and still
// resident, waiting for that grandchild.
func (f *fixture) waitingChild(p *parent.Handle) (child string, childAgent *parent.Handle, grandchild string) {
	f.t.Helper()
	child = f.start(p, "wait c")
	childAgent = f.rt.Registry().Get(child)
	grandchild = f.start(childAgent, "wait g")
	f.gates.reached("g")
	f.gates.open("c")
	require.NoError(f.t, childAgent.Activation().WhenIdle(testkit.Context(f.t)), "the child waiting for its grandchild to go idle")
	f.inActor(func() {})
	require.Same(f.t, childAgent, f.rt.Registry().Get(child), "the child waits for its grandchild")
	return child, childAgent, grandchild
}

// heldAtGate starts a child of the fixture's parent with prompt, waits
// until its turn reached gate, flushes what it wrote and returns its live
// session and its events so far.
func (f *fixture) heldAtGate(prompt, gate string) (child string, live *session.Live, before []session.Event) {
	f.t.Helper()
	child = f.start(f.parent, prompt)
	f.gates.reached(gate)
	live = f.rt.Sessions().Get(child)
	_, err := f.rt.Sessions().Flush(testkit.Context(f.t), live)
	require.NoError(f.t, err, "the flush of %s", child)
	return child, live, f.events(child)
}

// live reports whether an agent is registered under id.
func (f *fixture) live(id string) bool { return f.rt.Registry().Get(id) != nil }

// probe is a test's function run inside the manager's actor (probing).
type probe func()

// probing runs the probes sent to the manager's actor, in its mailbox
// order, and passes every other message on.
func probing(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		if p, ok := env.Message.(probe); ok {
			p()
			return
		}
		next(c, env)
	}
}

// post queues fn to run inside the manager's actor, which then performs
// the effects of the decisions fn took.
func (f *fixture) post(fn func()) {
	f.m.send(probe(func() {
		fn()
		f.performDecided()
	}))
}

// performDecided performs the effects of the decisions a probe took
// (inside the actor).
func (f *fixture) performDecided() {
	effects := f.m.effects
	f.m.effects = nil
	f.m.perform(effects)
}

// inActor runs fn inside the manager's actor and waits for it.
func (f *fixture) inActor(fn func()) {
	done := make(chan struct{})
	f.post(func() { fn(); close(done) })
	testkit.Receive(f.t, done, "a probe to run in the manager's actor")
}

// call sends o to the manager's actor as req and waits for its verdict.
func (f *fixture) call(ctx context.Context, o *op, start func(*op)) (string, error) {
	reply := make(chan outcome, 1)
	o.ctx, o.reply = ctx, reply
	f.post(func() { start(o) })
	out := testkit.Receive(f.t, reply, "the op's verdict")
	return out.messageID, out.err
}

// activation returns the child's current Activation (nil when absent),
// read inside the actor.
func (f *fixture) activation(id string) *activation {
	var a *activation
	f.inActor(func() { a = f.m.st.activations[id] })
	return a
}

// newAgent is the test agents' factory (see turn).
func (f *fixture) newAgent(opts agent.Options) agent.Agent {
	f.options.add(opts)
	return agent.Func(f.turn)
}

// turn runs one test turn. The message text chooses what it does:
//
//	wait NAME    block until gate NAME opens (or the turn is cancelled)
//	stuck NAME   block until gate NAME opens, ignoring cancellation
//	hold NAME    block until gate NAME opens, say "held" (its error
//	             ignored), then block until gate "NAME after" opens
//	max-tokens   say "partial", end with max-tokens
//	silent       end completed without saying anything
//	anything     say "answer: <text>"
func (f *fixture) turn(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
	text := msg.Content[0].Text
	switch {
	case strings.HasPrefix(text, "wait "):
		if !f.gates.wait(ctx, strings.TrimPrefix(text, "wait ")) {
			return agent.Aborted, nil
		}
	case strings.HasPrefix(text, "stuck "):
		f.gates.wait(context.Background(), strings.TrimPrefix(text, "stuck "))
		return agent.Aborted, nil
	case strings.HasPrefix(text, "hold "):
		name := strings.TrimPrefix(text, "hold ")
		if !f.gates.wait(ctx, name) {
			return agent.Aborted, nil
		}
		_ = host.Say(ctx, event.Text("held"))
		if !f.gates.wait(ctx, name+" after") {
			return agent.Aborted, nil
		}
		return agent.Completed, nil
	case text == "max-tokens":
		return agent.MaxTokens, host.Say(ctx, event.Text("partial"))
	case text == "silent":
		return agent.Completed, nil
	}
	return agent.Completed, host.Say(ctx, event.Text("answer: "+text))
}

// gates are named one-shot barriers test turns block on.
type gates struct {
	tb testing.TB // fails the test whose turns never reach a gate
	mu sync.Mutex
	ch map[string]chan struct{}
	at map[string]chan struct{} // closed once a turn waits at the gate
}

func newGates(tb testing.TB) *gates {
	return &gates{tb: tb, ch: map[string]chan struct{}{}, at: map[string]chan struct{}{}}
}

func (g *gates) get(m map[string]chan struct{}, name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m[name] == nil {
		m[name] = make(chan struct{})
	}
	return m[name]
}

// wait blocks until the gate opens (true) or ctx ends (false).
func (g *gates) wait(ctx context.Context, name string) bool {
	arrived := g.get(g.at, name)
	g.mu.Lock()
	select {
	case <-arrived:
	default:
		close(arrived)
	}
	g.mu.Unlock()
	select {
	case <-g.get(g.ch, name):
		return true
	case <-ctx.Done():
		return false
	}
}

// reached blocks until a turn waits at the gate; it fails the test
// naming the gate when none came within testkit.WaitLimit.
func (g *gates) reached(name string) {
	g.tb.Helper()
	testkit.Receive(g.tb, g.get(g.at, name), "a turn at gate "+name)
}

func (g *gates) open(name string) { close(g.get(g.ch, name)) }

// recorder is the Started and Ended pair that keeps every edge in order.
type recorder struct {
	mu      sync.Mutex
	changed chan struct{}
	edges   []string // "start <id>" / "end <id>"
	starts  []RunInfo
	ends    []RunEndInfo
	onStart func(RunInfo) error
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) Started(info RunInfo) error {
	r.mu.Lock()
	hook := r.onStart
	r.mu.Unlock()
	if hook != nil {
		if err := hook(info); err != nil {
			return err
		}
	}
	r.note(func() {
		r.starts = append(r.starts, info)
		r.edges = append(r.edges, "start "+info.ID)
	})
	return nil
}

func (r *recorder) Ended(info RunEndInfo) {
	r.note(func() {
		r.ends = append(r.ends, info)
		r.edges = append(r.edges, "end "+info.ID)
	})
}

func (r *recorder) setOnStart(fn func(RunInfo) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onStart = fn
}

func (r *recorder) note(change func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	change()
	close(r.changed)
	r.changed = make(chan struct{})
}

// waitEnd blocks until id has n end edges and returns the nth, or until
// deadline fires (then ok is false).
func (r *recorder) waitEnd(id string, n int, deadline <-chan time.Time) (end RunEndInfo, ok bool) {
	for {
		r.mu.Lock()
		seen := 0
		for _, e := range r.ends {
			if e.ID == id {
				seen++
				if seen == n {
					r.mu.Unlock()
					return e, true
				}
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			return RunEndInfo{}, false
		}
	}
}

func (r *recorder) snapshot() (edges []string, starts []RunInfo, ends []RunEndInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.edges...), append([]RunInfo(nil), r.starts...), append([]RunEndInfo(nil), r.ends...)
}

// optionsLog keeps the options every agent was built with.
type optionsLog struct {
	mu   sync.Mutex
	list []agent.Options
}

func (o *optionsLog) add(opts agent.Options) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(o.list, opts)
}

// last returns the options of the last agent built for id.
func (o *optionsLog) last(id string) agent.Options {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.list) - 1; i >= 0; i-- {
		if o.list[i].SessionID == id {
			return o.list[i]
		}
	}
	return agent.Options{}
}

// failingStore wraps the JSONL store and fails every Append to the ids
// marked failing.
type failingStore struct {
	session.Store
	mu      sync.Mutex
	failing map[string]bool
}

var errDiskFull = &diskFull{}

type diskFull struct{}

func (*diskFull) Error() string { return "disk full" }

func (s *failingStore) fail(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing == nil {
		s.failing = map[string]bool{}
	}
	s.failing[id] = true
}

func (s *failingStore) Append(ctx context.Context, id string, events []session.Event) error {
	s.mu.Lock()
	failing := s.failing[id]
	s.mu.Unlock()
	if failing {
		return errDiskFull
	}
	return s.Store.Append(ctx, id, events)
}

type sessionEvent = session.Event

// completedPrefix is p's log up to its last turn/end (what fork seeds).
func completedPrefix(p *parent.Handle) []session.Event {
	events := p.Session().Events()
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == "turn/end" {
			return events[:i+1]
		}
	}
	return nil
}

// underLock returns read() run under mu, so that assertions on what a
// listener recorded run unlocked: a failing one must not leave mu held
// while the cleanup's bus listeners wait for it (a failure, not a hang).
func underLock[T any](mu *sync.Mutex, read func() T) T {
	mu.Lock()
	defer mu.Unlock()
	return read()
}

// recordDisposals returns the ids of the agents disposed from now on, in
// order.
func (f *fixture) recordDisposals() func() []string {
	var mu sync.Mutex
	var ids []string
	f.rt.Registry().Subscribe(func(e parent.Event) {
		if e.Type == parent.EventDisposed {
			mu.Lock()
			ids = append(ids, e.AgentID)
			mu.Unlock()
		}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(ids)
	}
}

// recordDeadLetters returns the messages rt's actor system dead-lettered
// from now on, each as "<the PID it was sent to>: <its type>".
func recordDeadLetters(rt *actors.Runtime) func() []string {
	var mu sync.Mutex
	var letters []string
	rt.ActorHost().System.EventStream.Subscribe(func(evt any) {
		if dl, ok := evt.(*actor.DeadLetterEvent); ok {
			mu.Lock()
			letters = append(letters, fmt.Sprintf("%s: %T", dl.PID.Id, dl.Message))
			mu.Unlock()
		}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(letters)
	}
}
