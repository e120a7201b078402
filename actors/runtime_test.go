package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	bg   = context.Background()
	user = event.Source{Kind: "user"}
)

func open(t *testing.T, opts Options) *Runtime {
	t.Helper()
	rt, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(bg)) })
	return rt
}

func start(t *testing.T, rt *Runtime, id, parentID string) *parent.Handle {
	t.Helper()
	h, err := rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: id, ParentSession: parentID}})
	require.NoError(t, err)
	return h
}

// userTexts returns the text of every user/message in the agent's log.
func userTexts(t *testing.T, events []session.Event) []string {
	t.Helper()
	var texts []string
	for _, e := range events {
		if e.Type != "user/message" {
			continue
		}
		var msg event.UserMessage
		require.NoError(t, json.Unmarshal(e.Data, &msg))
		texts = append(texts, msg.Content[0].Text)
	}
	return texts
}

func TestFIFOUnder32ConcurrentSenders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const senders, each = 32, 20
		rt := open(t, Options{})
		h := start(t, rt, "a", "")
		var mu sync.Mutex
		var accepted []string
		rt.Registry().Subscribe(func(e parent.Event) {
			if e.Type == inbox.Enqueue {
				mu.Lock()
				accepted = append(accepted, e.MessageID)
				mu.Unlock()
			}
		})
		ids := map[string]string{} // message id → text
		var wg sync.WaitGroup
		for s := range senders {
			wg.Go(func() {
				for i := range each {
					text := fmt.Sprintf("reply %d-%d", s, i)
					id, err := rt.Followup(bg, "a", event.Text(text), user)
					require.NoError(t, err)
					mu.Lock()
					ids[id] = text
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.NoError(t, h.Activation().WhenIdle(bg))

		texts := userTexts(t, h.Session().Events())
		require.Len(t, texts, senders*each)
		for i, id := range accepted {
			require.Equal(t, ids[id], texts[i], "turn %d runs the %dth accepted message", i+1, i+1)
		}
		next := make([]int, senders)
		for _, text := range texts {
			s, i, _ := strings.Cut(strings.TrimPrefix(text, "reply "), "-")
			sender, _ := strconv.Atoi(s)
			require.Equal(t, strconv.Itoa(next[sender]), i, "sender %d's messages keep their order", sender)
			next[sender]++
		}
	})
}

func TestCloseWithAThousandLiveAgents(t *testing.T) {
	root := t.TempDir()
	const roots, children = 250, 3
	want := map[string]int{} // id → events in memory at Close
	synctest.Test(t, func(t *testing.T) {
		rt, err := New(Options{Root: root})
		require.NoError(t, err)
		var order []string
		var mu sync.Mutex
		rt.Registry().Subscribe(func(e parent.Event) {
			if e.Type == parent.EventDisposed {
				mu.Lock()
				order = append(order, e.AgentID)
				mu.Unlock()
			}
		})
		for r := range roots {
			rootID := fmt.Sprintf("root-%d", r)
			start(t, rt, rootID, "")
			for c := range children {
				childID := fmt.Sprintf("%s-child-%d", rootID, c)
				start(t, rt, childID, rootID)
				text := "reply done"
				if c == 0 {
					text = "sleep 1h" // still running at Close
				}
				_, err := rt.Followup(bg, childID, event.Text(text), user)
				require.NoError(t, err)
			}
		}
		require.Equal(t, roots*(children+1), len(rt.Registry().List()))
		synctest.Wait()
		require.NoError(t, rt.Close(bg))
		require.NoError(t, rt.Close(bg), "a second Close is a no-op")

		position := map[string]int{}
		for i, id := range order {
			position[id] = i
		}
		require.Len(t, position, roots*(children+1), "every agent was disposed once")
		for r := range roots {
			for c := range children {
				require.Less(t, position[fmt.Sprintf("root-%d-child-%d", r, c)], position[fmt.Sprintf("root-%d", r)], "children before their parent")
			}
		}
		for r := range roots {
			want[fmt.Sprintf("root-%d", r)] = 0
			want[fmt.Sprintf("root-%d-child-0", r)] = 3 // user/message, turn/start, turn/end aborted
			for c := 1; c < children; c++ {
				want[fmt.Sprintf("root-%d-child-%d", r, c)] = 6
			}
		}
	})

	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	for id, n := range want {
		log, err := store.Inspect(bg, id)
		require.NoError(t, err)
		require.Len(t, log.Events, n, "session %s was flushed", id)
		if n == 3 {
			require.JSONEq(t, `{"turn":1,"reason":{"kind":"disposed"}}`, string(log.Events[2].Data))
		}
	}
}

func TestCallsAfterCloseFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt, err := New(Options{})
		require.NoError(t, err)
		start(t, rt, "a", "")
		require.NoError(t, rt.Close(bg))
		_, err = rt.StartAgent(bg, parent.CreateSpec{})
		require.ErrorIs(t, err, fault.Closed)
		_, err = rt.ResumeAgent(bg, "a", parent.Spec{})
		require.ErrorIs(t, err, fault.Closed)
		_, err = rt.Followup(bg, "a", event.Text("reply x"), user)
		require.ErrorIs(t, err, fault.Closed)
		require.ErrorContains(t, err, "actors: runtime is closed")
		require.NoError(t, rt.Close(bg))
	})
}

func TestFollowupToAnUnknownAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := open(t, Options{})
		_, err := rt.Followup(bg, "ghost", event.Text("reply x"), user)
		require.ErrorIs(t, err, fault.AgentNotFound)
		require.ErrorContains(t, err, `actors: agent "ghost" is not live`)
	})
}

func TestBeforeCloseHooksRunFirstInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt, err := New(Options{})
		require.NoError(t, err)
		start(t, rt, "a", "")
		var ran []string
		drainFailed := errors.New("drain failed")
		failOnce := drainFailed
		rt.BeforeClose(func(context.Context) error {
			ran = append(ran, fmt.Sprintf("first live=%d", len(rt.Registry().List())))
			return nil
		})
		rt.BeforeClose(func(context.Context) error {
			ran = append(ran, "second")
			if err := failOnce; err != nil {
				failOnce = nil
				return err
			}
			return nil
		})
		remove := rt.BeforeClose(func(context.Context) error { ran = append(ran, "removed"); return nil })
		remove()
		remove()

		require.ErrorIs(t, rt.Close(bg), drainFailed)
		_, err = rt.Followup(bg, "a", event.Text("reply x"), user)
		require.ErrorIs(t, err, fault.Closed, "closing already began")
		require.NotNil(t, rt.Registry().Get("a"), "no agent is disposed before the hooks succeed")
		require.NoError(t, rt.Close(bg))
		require.Equal(t, []string{"first live=1", "second", "second"}, ran, "a succeeded hook is not rerun")
		require.Nil(t, rt.Registry().Get("a"))
	})
}

// spawner is a Subagents capability that starts children through the
// runtime, as the subagent layer does.
type spawner struct {
	rt   *Runtime
	self *parent.Handle
}

func (s spawner) Spawn(ctx context.Context, label, prompt string) (string, string, error) {
	child, err := s.rt.StartAgent(ctx, parent.CreateSpec{Header: session.Header{ID: label, ParentSession: s.self.ID()}})
	if err != nil {
		return "", "", err
	}
	id, err := child.Followup(ctx, event.Text(prompt), event.Source{Kind: "user"})
	return child.ID(), id, err
}

func (s spawner) Fork(ctx context.Context, label, prompt string) (string, string, error) {
	return s.Spawn(ctx, label, prompt)
}

func (s spawner) Send(ctx context.Context, childID, text string) (string, error) {
	return s.rt.Followup(ctx, childID, event.Text(text), event.Source{Kind: "coordinator", SenderSessionID: s.self.ID()})
}

// Wait and Children are not used by these tests.
func (spawner) Wait(context.Context, string) (agent.ChildEnd, bool, error) {
	return agent.ChildEnd{}, false, errors.New("spawner: Wait is not implemented")
}

func (spawner) Children(context.Context) ([]agent.Child, error) {
	return nil, errors.New("spawner: Children is not implemented")
}

func TestInstalledSubagentsLetScriptedAgentsSpawnAndSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := open(t, Options{})
		uninstall, err := rt.InstallSubagents(func(self *parent.Handle) agent.Subagents { return spawner{rt, self} })
		require.NoError(t, err)
		_, err = rt.InstallSubagents(func(self *parent.Handle) agent.Subagents { return spawner{rt, self} })
		require.ErrorIs(t, err, ErrSubagentsInstalled, "a second subagent service is refused")
		require.ErrorIs(t, err, fault.DuplicateProvider, "by code, as every refusal")
		h := start(t, rt, "boss", "")
		_, err = rt.Followup(bg, "boss", event.Text("spawn worker: reply on it\nsend worker: reply again"), user)
		require.NoError(t, err)
		require.NoError(t, h.Activation().WhenIdle(bg))
		worker := rt.Registry().Get("worker")
		require.NotNil(t, worker)
		require.NoError(t, worker.Activation().WhenIdle(bg))
		require.Equal(t, "boss", worker.Header().ParentSession)
		require.Equal(t, []string{"reply on it", "reply again"}, userTexts(t, worker.Session().Events()))
		require.Equal(t, []*parent.Handle{worker, h}, rt.Registry().LiveLineage(worker))
		uninstall()
		_, err = rt.InstallSubagents(func(self *parent.Handle) agent.Subagents { return spawner{rt, self} })
		require.NoError(t, err, "after uninstall another service may bind")
	})
}

func TestResumeUsesTheAgentFactory(t *testing.T) {
	root := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		var built []agent.Options
		rt := open(t, Options{Root: root, NewAgent: func(o agent.Options) agent.Agent {
			built = append(built, o)
			return agent.Scripted(o)
		}})
		h, err := rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "a"}, Spec: parent.Spec{Provider: "p", Model: "m"}})
		require.Equal(t, "p", h.Spec().Provider)
		require.NoError(t, err)
		require.NoError(t, h.Dispose(bg))
		_, err = rt.ResumeAgent(bg, "a", parent.Spec{Provider: "p", Model: "m"})
		require.NoError(t, err)
		require.Equal(t, []agent.Options{
			{SessionID: "a", Provider: "p", Model: "m"},
			{SessionID: "a", Provider: "p", Model: "m", Resumed: true},
		}, built)
		require.Equal(t, parent.Spec{Provider: "p", Model: "m"}, rt.Registry().Get("a").Spec())
	})
}

func TestCloseIsBoundedByItsContextAndResumable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		rt, err := New(Options{NewAgent: func(agent.Options) agent.Agent {
			return agent.Func(func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
				<-release // ignores cancellation
				return agent.Completed, nil
			})
		}})
		require.NoError(t, err)
		start(t, rt, "stuck", "")
		_, err = rt.Followup(bg, "stuck", event.Text("x"), user)
		require.NoError(t, err)
		synctest.Wait()
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		require.ErrorIs(t, rt.Close(ctx), context.DeadlineExceeded)
		_, err = rt.StartAgent(bg, parent.CreateSpec{})
		require.ErrorIs(t, err, fault.Closed)
		close(release)
		require.NoError(t, rt.Close(bg))
		require.Zero(t, len(rt.Registry().List()))
	})
}

// appendFailing is a store whose Append fails for one session id.
type appendFailing struct {
	session.Store
	id string
}

var errAppendFailed = errors.New("disk full")

func (s appendFailing) Append(ctx context.Context, id string, events []session.Event) error {
	if id == s.id {
		return errAppendFailed
	}
	return s.Store.Append(ctx, id, events)
}

// A leaf whose final flush fails does not stop Close half-way: its parent
// is still disposed, the failure is returned, and the runtime shuts down
// (goleak checks that no actor or pool goroutine is left).
func TestCloseDisposesEveryLevelWhenALeafFailsItsFlush(t *testing.T) {
	jsonl, err := session.OpenJSONL(t.TempDir())
	require.NoError(t, err)
	defer func() { require.NoError(t, jsonl.Close()) }()
	synctest.Test(t, func(t *testing.T) {
		rt, err := New(Options{Sessions: session.NewSessions(appendFailing{Store: jsonl, id: "leaf"})})
		require.NoError(t, err)
		root := start(t, rt, "root", "")
		start(t, rt, "leaf", "root")
		_, err = rt.Followup(bg, "leaf", event.Text("reply done"), user)
		require.NoError(t, err)
		synctest.Wait()
		require.ErrorIs(t, rt.Close(bg), errAppendFailed)
		require.Zero(t, len(rt.Registry().List()), "the parent was disposed too")
		<-root.Disposed()
		require.NoError(t, rt.Close(bg), "a completed Close is a no-op")
	})
}
