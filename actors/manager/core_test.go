package manager

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestCoreSteps runs the scripts under testdata/core/ against the core
// alone: no actor, goroutine, runtime or store. Each line is one message
// stepped into the core and, after " => ", the effects that step
// returned, in order (a message handed to a child's inbox is shown as a
// post, where the step made it). Nothing happens between lines: an I/O
// effect's result arrives only when a later line feeds it. Children are
// named by the script and their ids are their names; "parent" is the
// top-level agent. Lines:
//
//	durable [wakes]            the store's inbox admits durably (and wakes
//	                           other processes); first line only
//	start NAME OWNER TEXT      OWNER starts NAME with prompt TEXT
//	followup NAME TEXT         NAME's owner sends TEXT to NAME
//	wake NAME                  the store woke NAME (a message was committed
//	                           to its durable inbox)
//	drain OWNER                drain OWNER's continuable descendants
//	prepared NAME              NAME's preparation ends
//	loaded NAME [held]         NAME's log was loaded (or another holder has its lease)
//	opened NAME                NAME's epoch was created or resumed
//	started NAME               NAME's subagent/start was published
//	admitted NAME              the durable inbox committed the op's message for NAME
//	admitted-elsewhere NAME    the same, for a child another process holds
//	discarded NAME             the committed message the op for NAME refused
//	                           was discarded from the durable inbox
//	drain-read NAME [drained]  whether a drain in force closes resident NAME
//	orphan-read NAME [held]    NAME waits for a holder, its log read (or a
//	                           live holder has it, elsewhere)
//	pending NAME TEXT...       NAME's durable inbox holds TEXT... unclaimed
//	settled NAME               the disposal an op for NAME waited for settled
//	rolledback NAME            NAME's unpublished epoch was disposed
//	run NAME                   NAME's inbox hands its oldest message to a turn
//	idle NAME                  NAME's turn ended and its inbox is empty
//	fence NAME                 another holder took NAME's lease over
//	released NAME [REASON|failed]  NAME's actor's release step ended, its
//	                           epoch ending with REASON (completed when
//	                           none), or failed
//	lose NAME                  another holder took NAME's lease over, unnoticed yet
//	exit NAME                  NAME's agent left the registry
func TestCoreSteps(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "core", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, path := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) { runSteps(t, path) })
	}
}

// runSteps runs one script and compares (or, with -rewrite, replaces)
// the effects of each line.
func runSteps(t *testing.T, path string) {
	var out []string
	var s *stepper
	for i, line := range readLines(t, path) {
		step, want, isStep := strings.Cut(line, " => ")
		if !isStep && (strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#")) {
			out = append(out, line)
			continue
		}
		step = strings.TrimSpace(step)
		if s == nil {
			s = newStepper(t, strings.HasPrefix(step, "durable"), step == "durable wakes")
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

// stepper drives a core through a script.
type stepper struct {
	t     *testing.T
	c     *core
	env   *tableEnv
	owner map[string]string      // child → the name of its owner
	ops   map[string][]*op       // "effect child" → the ops waiting for its result, oldest first
	epoch map[string]*activation // child → its latest epoch
	label map[*op]string         // op → how the script calls it
	// refusal is why the op refused the committed message it waits to
	// have discarded.
	refusal map[*op]error
	// committed are the ids of the messages ops committed, by text.
	committed map[string]string
	mats      map[*materialization]string
}

func newStepper(t *testing.T, durable, wakes bool) *stepper {
	env := newTableEnv()
	c := &core{st: newState(), env: env, durable: durable, wakes: wakes, logger: slog.New(slog.DiscardHandler)}
	return &stepper{t: t, c: c, env: env, owner: map[string]string{}, ops: map[string][]*op{},
		epoch: map[string]*activation{}, label: map[*op]string{}, refusal: map[*op]error{}, committed: map[string]string{}, mats: map[*materialization]string{}}
}

// run feeds the message step names to the core and describes its effects.
func (s *stepper) run(step string) string {
	words := strings.Fields(step)
	require.NotEmpty(s.t, words)
	s.env.posts = nil
	msg := s.message(words)
	if msg == nil {
		return "-"
	}
	effects := s.c.step(msg)
	described := append(s.env.posts, s.describe(effects)...)
	if len(described) == 0 {
		return "-"
	}
	return strings.Join(described, "; ")
}

// message is the message a script line stands for (nil: the line only
// changed the env).
func (s *stepper) message(words []string) any {
	name, rest := "", words[1:]
	if len(words) > 1 {
		name, rest = words[1], words[2:]
	}
	switch words[0] {
	case "durable":
		return nil
	case "start", "followup", "wake", "drain":
		return s.request(words[0], name, rest)
	case "prepared", "loaded", "opened", "started", "admitted", "admitted-elsewhere", "discarded",
		"pending", "settled", "drain-read", "orphan-read":
		return s.result(words[0], name, rest)
	}
	return s.notice(words[0], name, rest)
}

// request is a call of the manager's.
func (s *stepper) request(verb, name string, rest []string) any {
	switch verb {
	case "start":
		owner := rest[0]
		s.owner[name] = owner
		s.env.nextIDs = append(s.env.nextIDs, name)
		p := s.env.agent(owner)
		prompt := event.Text(strings.Join(rest[1:], " "))
		o := s.newOp("start "+name, &op{kind: opStart, parent: p, content: prompt, source: event.Source{Kind: "user"},
			spec: StartSpec{Provider: "test", Label: name, Request: Request{Prompt: prompt, Parent: p}}})
		return startRequest{o}
	case "followup":
		o := s.newOp("followup "+name, &op{kind: opFollowup, childID: name, parent: s.env.agent(s.owner[name]),
			content: event.Text(strings.Join(rest, " ")), source: event.Source{Kind: "user"}})
		return followupRequest{o}
	case "wake":
		return wakeRequest{s.newOp("wake "+name, &op{kind: opWake, childID: name})}
	}
	return scopedDrainRequest{ctx: bg, parents: []*parent.Handle{s.env.agent(name)}, result: make(chan error, 1)}
}

func (s *stepper) newOp(label string, o *op) *op {
	o.ctx = bg
	o.reply = make(chan outcome, 1)
	s.label[o] = label
	return o
}

// result is the result of the I/O an op for name asked for.
func (s *stepper) result(verb, name string, rest []string) any {
	o := s.waiting(verb, name)
	switch verb {
	case "prepared":
		return prepared{op: o, create: &parent.CreateSpec{Header: session.Header{ID: name, ParentSession: s.owner[name]}}}
	case "loaded":
		if len(rest) > 0 {
			return resumeLoaded{op: o, err: fault.New(fault.LeaseHeld, "held by another process", nil)}
		}
		return resumeLoaded{op: o, log: s.log(name)}
	case "opened":
		return opened{op: o, h: s.env.open(name, o.ms.parent)}
	case "started":
		return startEmitted{op: o}
	case "admitted":
		return admitted{op: o}
	case "admitted-elsewhere":
		return admittedElsewhere{op: o}
	case "discarded":
		return commitDiscarded{op: o, refusal: s.refusal[o]}
	case "drain-read":
		return drainRead{op: o, drained: len(rest) > 0}
	case "orphan-read":
		if len(rest) > 0 {
			return orphanRead{op: o}
		}
		return orphanRead{op: o, orphaned: true, log: s.log(name)}
	case "pending":
		return pendingRead{op: o, pending: s.pending(rest)}
	}
	return disposalSettled{o}
}

// waiting is the oldest op for name waiting for the result verb names.
func (s *stepper) waiting(verb, name string) *op {
	key := verb + " " + name
	queue := s.ops[key]
	require.NotEmpty(s.t, queue, "no op waits for %q", key)
	s.ops[key] = queue[1:]
	return queue[0]
}

// notice is what a child, the registry or a teardown tells the core.
func (s *stepper) notice(verb, name string, rest []string) any {
	a := s.epoch[name]
	require.NotNil(s.t, a, "%s has no epoch", name)
	switch verb {
	case "run":
		return childEvent{a, parent.Event{Event: inbox.Event{Type: inbox.Dequeue, MessageID: s.env.dequeue(a.handle)}}}
	case "idle":
		s.env.busy[a.handle] = false
		return childEvent{a, parent.Event{Event: inbox.Event{Type: inbox.StatusChange, Status: inbox.Idle}}}
	case "fence":
		s.env.failure[a.handle] = fault.New(fault.Fenced, "the lease moved on", nil)
		return childFenced{a}
	case "released":
		delete(s.env.live, a.handle)
		out := teardownOutcome{epoch: epochReport{StopReason: agent.Completed}}
		switch {
		case len(rest) == 0:
		case rest[0] == "failed":
			out.failure = errors.New("the teardown failed")
		default:
			out.epoch.StopReason = agent.StopReason(rest[0])
		}
		a.link.out = out
		return released{a}
	case "lose":
		s.env.failure[a.handle] = fault.New(fault.Fenced, "the lease moved on", nil)
		return nil
	case "exit":
		delete(s.env.live, a.handle)
		return agentDisposed{id: name}
	}
	s.t.Fatalf("unknown line %s %s", verb, name)
	return nil
}

// log is a child's durable log as a cold resume loads it: its header
// names its owner, and its own suffix holds its descriptor.
func (s *stepper) log(name string) *session.Log {
	d, err := descriptor.Snapshot(descriptor.Data{Provider: "test", Label: name, AgentProvider: vocab.DefaultProvider, AgentModel: vocab.DefaultModel})
	require.NoError(s.t, err)
	data, err := json.Marshal(d)
	require.NoError(s.t, err)
	return &session.Log{Header: session.Header{ID: name, ParentSession: s.owner[name]},
		Events: []session.Event{{Type: vocab.TypeSubagentDescriptor, Data: data}}}
}

// pending are durable admissions of texts: a text an op committed has
// the id the op gave it, any other text is its own id.
func (s *stepper) pending(texts []string) []session.Admission {
	var out []session.Admission
	for _, text := range texts {
		id := cmp.Or(s.committed[text], text)
		body, err := vocab.Encode(event.UserMessage{Role: event.RoleUser, ID: id, Content: event.Text(text), Source: event.Source{Kind: event.SourceUser}})
		require.NoError(s.t, err)
		out = append(out, session.Admission{MessageID: id, Body: body})
	}
	return out
}

// describe names the effects of one step and notes the ops waiting for
// their results.
func (s *stepper) describe(effects []effect) []string {
	var out []string
	for _, e := range effects {
		if d := s.describeOne(e); d != "" {
			out = append(out, d)
		}
	}
	return out
}

func (s *stepper) describeOne(e effect) string {
	switch e := e.(type) {
	case reply:
		return "reply " + s.label[e.o] + " " + code(e.out.err)
	case prepareSeed:
		return s.await("prepare", "prepared", e.o)
	case loadLog:
		return s.await("load", "loaded", e.o)
	case openEpoch:
		s.mats[e.o.mat] = e.o.childID
		if e.o.ms.create == nil {
			return s.await("resume", "opened", e.o)
		}
		return s.await("create", "opened", e.o)
	case emitStart:
		return s.await("emit-start", "started", e.o)
	case commitAdmission:
		s.committed[textOf(e.o.msg.Content)] = e.o.msg.ID
		return s.await("commit", "admitted", e.o) + " " + textOf(e.o.msg.Content)
	case commitElsewhere:
		return s.await("commit-elsewhere", "admitted-elsewhere", e.o) + " " + textOf(e.o.msg.Content)
	case discardCommit:
		s.refusal[e.o] = e.refusal
		return s.await("discard", "discarded", e.o) + " " + textOf(e.o.msg.Content)
	case readDrained:
		return s.await("read-drained", "drain-read", e.o)
	case readOrphan:
		return s.await("read-orphan", "orphan-read", e.o)
	case readPending:
		return s.await("read-pending", "pending", e.o)
	case awaitDisposal:
		return s.await("await-disposal", "settled", e.o)
	case watchQueued:
		return "queue " + s.label[e.o]
	case unwatchQueued:
		return "dequeue " + s.label[e.o]
	}
	return s.describeEpochEffect(e)
}

// await notes that o waits for result and names the effect.
func (s *stepper) await(effect, result string, o *op) string {
	key := result + " " + o.childID
	s.ops[key] = append(s.ops[key], o)
	return effect + " " + o.childID
}

func (s *stepper) describeEpochEffect(e effect) string {
	switch e := e.(type) {
	case observeEpoch:
		s.epoch[e.a.childID] = e.a
		return "observe " + e.a.childID
	case stopEpoch:
		if e.cause.Kind != agent.CauseParent {
			return "stop " + e.a.childID + " " + e.cause.Kind
		}
		return "stop " + e.a.childID
	case forgetEpoch:
		return "forget " + e.a.childID
	case emitEnd:
		return "end " + e.a.childID + " " + string(e.end.StopReason)
	case settleRollback:
		return "settle-rollback " + e.a.childID
	case materializationEnded:
		return "materialized " + s.mats[e.mat]
	case finishScopedDrain:
		return fmt.Sprintf("drain-waits %d", len(e.disposals))
	case answer:
		return "answer " + code(e.err)
	}
	return fmt.Sprintf("%T", e)
}

func textOf(blocks []event.Block) string {
	var texts []string
	for _, b := range blocks {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, " ")
}

// tableEnv is the core's env as a script sets it: agents are names,
// each epoch a handle the core never calls.
type tableEnv struct {
	names   map[*parent.Handle]string
	current map[string]*parent.Handle
	live    map[*parent.Handle]bool
	owner   map[*parent.Handle]*parent.Handle
	busy    map[*parent.Handle]bool
	failure map[*parent.Handle]error
	inboxes map[*parent.Handle][]event.UserMessage
	nextIDs []string // the ids newID hands out first
	ids     int
	posts   []string // what post handed over during the step under way
}

func newTableEnv() *tableEnv {
	e := &tableEnv{names: map[*parent.Handle]string{}, current: map[string]*parent.Handle{},
		live: map[*parent.Handle]bool{}, owner: map[*parent.Handle]*parent.Handle{}, busy: map[*parent.Handle]bool{},
		failure: map[*parent.Handle]error{}, inboxes: map[*parent.Handle][]event.UserMessage{}}
	e.open("parent", nil)
	return e
}

// open makes a new live epoch of name, owned by owner (nil: top-level).
func (e *tableEnv) open(name string, owner *parent.Handle) *parent.Handle {
	h := &parent.Handle{}
	e.names[h], e.current[name], e.live[h], e.owner[h] = name, h, true, owner
	return h
}

// agent is name's latest epoch, live or not.
func (e *tableEnv) agent(name string) *parent.Handle { return e.current[name] }

// dequeue takes h's oldest posted message into a turn.
func (e *tableEnv) dequeue(h *parent.Handle) string {
	queue := e.inboxes[h]
	if len(queue) == 0 {
		return ""
	}
	e.inboxes[h] = queue[1:]
	e.busy[h] = true
	return queue[0].ID
}

func (e *tableEnv) closed() error                { return nil }
func (e *tableEnv) hasStore() bool               { return true }
func (e *tableEnv) isLive(p *parent.Handle) bool { return e.live[p] }

func (e *tableEnv) liveLineage(p *parent.Handle) []*parent.Handle {
	var lineage []*parent.Handle
	for ; p != nil && e.live[p]; p = e.owner[p] {
		lineage = append(lineage, p)
	}
	return lineage
}

func (e *tableEnv) liveAgent(id string) *parent.Handle {
	if h := e.current[id]; e.live[h] {
		return h
	}
	return nil
}

func (e *tableEnv) sessionLive(id string) bool           { return e.liveAgent(id) != nil }
func (e *tableEnv) idOf(p *parent.Handle) string         { return e.names[p] }
func (e *tableEnv) headerParent(h *parent.Handle) string { return e.names[e.owner[h]] }
func (e *tableEnv) running(h *parent.Handle) bool        { return e.busy[h] }
func (e *tableEnv) writeFailure(h *parent.Handle) error  { return e.failure[h] }

func (e *tableEnv) post(h *parent.Handle, msg event.UserMessage) error {
	e.inboxes[h] = append(e.inboxes[h], msg)
	e.posts = append(e.posts, "post "+e.names[h]+" "+textOf(msg.Content))
	return nil
}

func (e *tableEnv) newID() string {
	if len(e.nextIDs) > 0 {
		id := e.nextIDs[0]
		e.nextIDs = e.nextIDs[1:]
		return id
	}
	e.ids++
	return fmt.Sprintf("m%d", e.ids)
}

var _ env = (*tableEnv)(nil)
