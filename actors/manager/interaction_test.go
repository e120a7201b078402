package manager

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected effects of testdata/*.txt with what the manager did")

// TestInteractions runs the scripts under testdata/: each line is one
// step and, after " => ", the effects it had once everything it set off
// came to rest (a synctest bubble): the results of the operations that
// completed, in the order they were started, then the lifecycle edges in
// the order they were emitted. Children are named by the script; "parent"
// is the top-level agent. Steps:
//
//	store durable            the JSONL store admits follow-ups durably (first step only)
//	start NAME OWNER TEXT    start a continuable child of OWNER with prompt TEXT
//	followup NAME TEXT       send TEXT to NAME from its owner's live agent
//	admit NAME TEXT          commit TEXT to NAME's durable inbox behind the manager's back
//	drain OWNER              drain OWNER's continuable descendants
//	open GATE                open a gate the test turns wait at (see fixture.turn)
//	fence NAME               another holder takes NAME's lease over
//	unfence NAME             that holder gives it back
//	log NAME                 (effects: NAME's user messages in its log, in order)
//
// An operation that has not completed when its step comes to rest
// reports its result at the step where it does.
func TestInteractions(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, path := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runScript(t, path) })
		})
	}
}

// runScript runs one script and compares (or, with -rewrite, replaces)
// the effects of each step.
func runScript(t *testing.T, path string) {
	lines := readLines(t, path)
	var out []string
	var s *script
	for i, line := range lines {
		step, want, isStep := strings.Cut(line, " => ")
		if !isStep && (strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#")) {
			out = append(out, line)
			continue
		}
		step = strings.TrimSpace(step)
		if s == nil {
			s = newScript(t, step == "store durable")
		}
		got := s.run(step)
		if *rewrite {
			out = append(out, step+" => "+got)
			continue
		}
		require.Equal(t, strings.TrimSpace(want), got, "%s:%d: %s", path, i+1, step)
	}
	if *rewrite {
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644))
	}
}

func readLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	return lines
}

// script is a fixture driven by named steps.
type script struct {
	t      *testing.T
	f      *fixture
	store  session.Fenced
	root   string
	ids    map[string]string // child name → id
	names  map[string]string // id → child name
	owners map[string]string // child name → owner name
	// handles are the agents last seen live under each name
	handles map[string]*parent.Handle
	others  map[string]session.Fenced
	epochs  map[string]session.Epoch
	seen    int // lifecycle edges reported so far

	mu      sync.Mutex
	pending []*operation // started, not yet reported
}

// operation is one step that calls the manager; done closes with result.
type operation struct {
	label  string
	result string
	done   chan struct{}
}

func newScript(t *testing.T, durableAdmission bool) *script {
	root := t.TempDir()
	opts := []session.Option{session.WithLogger(slog.New(slog.DiscardHandler))}
	if durableAdmission {
		opts = append(opts, session.WithDurableAdmission())
	}
	store, err := session.OpenJSONL(root, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	s := &script{t: t, store: store, root: root, ids: map[string]string{}, names: map[string]string{"parent": "parent"},
		owners: map[string]string{}, handles: map[string]*parent.Handle{}, others: map[string]session.Fenced{}, epochs: map[string]session.Epoch{}}
	s.f = newFixture(t, withStore(store))
	s.ids["parent"] = "parent"
	t.Cleanup(s.openAllGates) // before the fixture's: let stuck turns end
	return s
}

// run performs step, lets everything it set off come to rest and returns
// its effects.
func (s *script) run(step string) string {
	words := strings.Fields(step)
	require.NotEmpty(s.t, words)
	text := strings.Join(words[min(len(words), 2):], " ")
	switch verb := words[0]; verb {
	case "store":
	case "start":
		require.GreaterOrEqual(s.t, len(words), 4, step)
		s.start(words[1], words[2], strings.Join(words[3:], " "))
	case "followup":
		s.followup(words[1], text)
	case "admit":
		s.admit(words[1], text)
	case "drain":
		s.drain(words[1])
	case "open":
		s.f.gates.open(strings.Join(words[1:], " "))
	case "fence":
		s.fence(words[1])
	case "unfence":
		s.unfence(words[1])
	case "log":
		synctest.Wait()
		return strings.Join(s.f.userTexts(s.id(words[1])), "|")
	default:
		s.t.Fatalf("unknown step %q", step)
	}
	synctest.Wait()
	return s.effects()
}

// async runs call as the operation label and returns at once.
func (s *script) async(label string, call func(ctx context.Context) string) {
	op := &operation{label: label, done: make(chan struct{})}
	s.mu.Lock()
	s.pending = append(s.pending, op)
	s.mu.Unlock()
	go func() {
		op.result = call(bg)
		close(op.done)
	}()
}

func (s *script) start(name, owner, prompt string) {
	h := s.agent(owner)
	s.async("start "+name, func(ctx context.Context) string {
		started, err := s.f.m.StartContinuable(ctx, s.f.spec(h, prompt))
		if err != nil {
			return code(err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ids[name], s.names[started.ChildID], s.owners[name] = started.ChildID, name, owner
		if h := s.f.rt.Registry().Get(started.ChildID); h != nil {
			s.handles[name] = h
		}
		return "ok"
	})
}

func (s *script) followup(name, text string) {
	id, h := s.id(name), s.agent(s.owner(name))
	s.async("followup "+name, func(ctx context.Context) string {
		_, err := s.f.m.Followup(ctx, h, id, event.Text(text), event.Source{Kind: "user"})
		return code(err)
	})
}

func (s *script) drain(owner string) {
	h := s.agent(owner)
	s.async("drain "+owner, func(ctx context.Context) string {
		return code(s.f.m.DrainContinuableDescendants(ctx, []*parent.Handle{h}))
	})
}

// admit commits text to name's durable inbox from its owner's live epoch.
func (s *script) admit(name, text string) {
	in, ok := session.InboxOf(s.store)
	require.True(s.t, ok, "admit needs the durable store (store durable)")
	owner := s.agent(s.owner(name))
	_, err := in.Admit(bg, s.id(name), durableMessage(s.t, text, owner.ID(), owner.Session().Epoch()))
	require.NoError(s.t, err)
}

// fence moves name's lease to another holder behind its live session.
func (s *script) fence(name string) {
	live := s.f.rt.Sessions().Get(s.id(name))
	require.NotNil(s.t, live, "%s is not live", name)
	other, err := session.OpenJSONL(s.root, session.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(s.t, err)
	s.t.Cleanup(func() { require.NoError(s.t, other.Close()) })
	s.others[name] = other
	s.epochs[name] = takeOver(s.t, s.store, live, other)
}

func (s *script) unfence(name string) {
	require.NoError(s.t, s.others[name].Release(bg, s.id(name), s.epochs[name]))
}

// effects are the results of the operations that completed, in the
// order they were started, then the lifecycle edges since the last step.
func (s *script) effects() string {
	var effects []string
	s.mu.Lock()
	s.pending = slices.DeleteFunc(s.pending, func(op *operation) bool {
		select {
		case <-op.done:
			effects = append(effects, op.label+" "+op.result)
			return true
		default:
			return false
		}
	})
	s.mu.Unlock()
	edges, starts, ends := s.f.rec.snapshot()
	startAt, endAt := 0, 0
	for i, e := range edges {
		isStart := strings.HasPrefix(e, "start ")
		switch {
		case i < s.seen:
		case isStart:
			effects = append(effects, "start "+s.name(starts[startAt].ID))
		default:
			effects = append(effects, s.describeEnd(ends[endAt]))
		}
		if isStart {
			startAt++
		} else {
			endAt++
		}
	}
	s.seen = len(edges)
	if len(effects) == 0 {
		return "-"
	}
	return strings.Join(effects, "; ")
}

func (s *script) describeEnd(end RunEndInfo) string {
	d := fmt.Sprintf("end %s %s", s.name(end.ID), end.StopReason)
	if end.DiscardedFollowups > 0 {
		d += fmt.Sprintf(" discarded=%d", end.DiscardedFollowups)
	}
	return d
}

func (s *script) id(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.ids[name]
	require.True(s.t, ok, "no child named %s", name)
	return id
}

func (s *script) name(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name, ok := s.names[id]; ok {
		return name
	}
	return id
}

func (s *script) owner(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owners[name]
}

// agent is the live agent named name or, once it left the registry, the
// handle it last had (a stale parent).
func (s *script) agent(name string) *parent.Handle {
	id := s.id(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.f.rt.Registry().Get(id); h != nil {
		s.handles[name] = h
	}
	h := s.handles[name]
	require.NotNil(s.t, h, "%s was never live", name)
	return h
}

// openAllGates opens every gate a turn still waits at.
func (s *script) openAllGates() {
	g := s.f.gates
	g.mu.Lock()
	var names []string
	for name := range g.at {
		names = append(names, name)
	}
	g.mu.Unlock()
	for _, name := range names {
		ch := g.get(g.ch, name)
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

// code is "ok", or the fault code of err.
func code(err error) string {
	if err == nil {
		return "ok"
	}
	if c := fault.CodeOf(err); c != "" {
		return string(c)
	}
	return "error: " + err.Error()
}
