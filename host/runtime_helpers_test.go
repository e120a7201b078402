package host

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// converse prompts the top-level session id (resuming it when stored) and
// waits (a minute at most) for its turns to end.
func converse(t testing.TB, rt *dsh.Runtime, id, text string) {
	t.Helper()
	_, err := rt.PromptSession(context.Background(), id, event.Text(text), userSource)
	require.NoError(t, err, "prompting %s with %q", id, text)
	waitIdle(t, rt, id, text)
}

// waitIdle waits a minute at most for the turns of the agent live under
// id to end, naming the prompt waited for when they do not.
func waitIdle(t testing.TB, rt *dsh.Runtime, id, prompt string) {
	t.Helper()
	h, ok := rt.Agent(id)
	require.True(t, ok, "%s is live (waiting for its turn on %q)", id, prompt)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, h.WhenIdle(ctx), "waiting for %s's turn on %q to end", id, prompt)
}

// isLive reports whether an agent is live under id in rt.
func isLive(rt *dsh.Runtime, id string) bool {
	_, ok := rt.Agent(id)
	return ok
}

// started starts the top-level agent id (a new id when "") and returns its id.
func started(t testing.TB, rt *dsh.Runtime, id string) string {
	t.Helper()
	h, err := rt.StartAgent(context.Background(), id)
	require.NoError(t, err, "starting %q", id)
	return h.ID()
}

// history is the events of session id's log.
func history(t testing.TB, rt *dsh.Runtime, id string) []dsh.Event {
	t.Helper()
	h, err := rt.History(context.Background(), id)
	require.NoError(t, err, "reading %s", id)
	return h.Events
}

// lastSeq is the seq of the last event of session id (-1 for none).
func lastSeq(t testing.TB, rt *dsh.Runtime, id string) int64 {
	t.Helper()
	return int64(len(history(t, rt, id))) - 1
}

// planted opens the JSONL store at root as a runtime with Compression
// compression opens it, lets plantAll store sessions in it (beside a
// runtime on the same folder), then closes it, which flushes them.
func planted(t testing.TB, root, compression string, plantAll func(store *session.JSONL)) {
	t.Helper()
	opts := []session.Option{session.WithNewStoreCompression(session.CompressionZstd)}
	switch compression {
	case "none":
		opts = []session.Option{session.WithCompression(session.CompressionNone)}
	case "zstd":
		opts = []session.Option{session.WithCompression(session.CompressionZstd)}
	}
	store, err := session.OpenJSONL(root, opts...)
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	plantAll(store)
}

// plant stores the session of h holding events (their seqs from 0, their
// times h's CreatedAt, now when it is 0, unless set).
func plant(t testing.TB, store *session.JSONL, h session.Header, events ...session.Event) {
	t.Helper()
	ctx := context.Background()
	if h.CreatedAt == 0 {
		h.CreatedAt = time.Now().UnixMilli()
	}
	require.NoError(t, store.Create(ctx, h, nil), "planting %s", h.ID)
	for i := range events {
		events[i].Seq = int64(i)
		if events[i].Time == 0 {
			events[i].Time = h.CreatedAt
		}
	}
	if len(events) > 0 {
		require.NoError(t, store.Append(ctx, h.ID, events), "planting the events of %s", h.ID)
	}
}

// agentHooks are the stack's agent: the scripted agent, except for the
// turns of a session that a test armed to fail as an upstream model call
// does (with a failure's message and code) or scripted as functions.
type agentHooks struct {
	mu    sync.Mutex
	armed map[string]vocab.Failure
	turns map[string][]agent.Func
}

// arm makes the next turn of session id fail with f instead of running
// its prompt.
func (u *agentHooks) arm(id string, f vocab.Failure) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.armed == nil {
		u.armed = map[string]vocab.Failure{}
	}
	u.armed[id] = f
}

// script makes the next turns of session id run turns, one each, in
// order.
func (u *agentHooks) script(id string, turns ...agent.Func) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.turns == nil {
		u.turns = map[string][]agent.Func{}
	}
	u.turns[id] = append(u.turns[id], turns...)
}

// next is what runs the next turn of id: its failure or its scripted
// turn, when armed.
func (u *agentHooks) next(id string) (vocab.Failure, agent.Func, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if f, ok := u.armed[id]; ok {
		delete(u.armed, id)
		return f, nil, true
	}
	if turns := u.turns[id]; len(turns) > 0 {
		u.turns[id] = turns[1:]
		return vocab.Failure{}, turns[0], true
	}
	return vocab.Failure{}, nil, false
}

// agent is the scripted agent, except that a turn armed to fail ends
// with its failure and a scripted turn runs its function, neither running
// the prompt.
func (u *agentHooks) agent(o agent.Options) agent.Agent {
	scripted := agent.Scripted(o)
	return agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		switch failure, turn, ok := u.next(o.SessionID); {
		case ok && turn != nil:
			return turn(ctx, host, msg)
		case ok:
			return agent.Error, failure
		}
		return scripted.RunTurn(ctx, host, msg)
	})
}

// failTurn prompts the top-level session id with prompt in a turn that
// fails with failure (armed on the stack's agent) and waits for it.
func (s *runtimeStack) failTurn(t testing.TB, id, prompt string, failure vocab.Failure) {
	t.Helper()
	s.hooks.arm(id, failure)
	converse(t, s.rt, id, prompt)
}
