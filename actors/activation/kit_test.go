package activation

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// userTexts is the text of every user/message a's session logged.
func userTexts(t *testing.T, a *Activation) []string {
	t.Helper()
	var texts []string
	for _, e := range a.Session().Events() {
		if e.Type == "user/message" {
			texts = append(texts, string(e.Data))
		}
	}
	return texts
}

func TestAgentsSpawnedAtOnceShareTheirPropsAndEachRunsItsOwnTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTree(t)
		scripted := agent.Scripted(agent.Options{})
		p := tr.mustStart("p", scripted, nil)
		const n = 16
		agents := make([]*Activation, 2*n)
		var wg sync.WaitGroup
		for i := range agents {
			wg.Go(func() {
				var under *Activation
				if i%2 == 1 {
					under = p // half of them spawned under p, by p's actor
				}
				a, err := tr.start(fmt.Sprintf("a%d", i), scripted, under)
				require.NoError(t, err)
				agents[i] = a
			})
		}
		wg.Wait()
		for _, a := range agents {
			require.Same(t, p.kit, a.kit, "one host, one logger: one kit")
			followup(t, a, "for "+a.id())
		}
		synctest.Wait()
		for _, a := range agents {
			texts := userTexts(t, a)
			require.Len(t, texts, 1, a.id())
			require.Contains(t, texts[0], `"text":"for `+a.id()+`"`, "the turn ran in the actor spawned for its own agent")
		}
		for i, a := range agents {
			if i%2 == 0 {
				require.NoError(t, a.Dispose(bg))
			}
		}
		require.NoError(t, p.Dispose(bg), "p's stop stops the agents spawned under it")
		for _, a := range agents {
			require.True(t, stopped(a), a.id())
		}
	})
}

func TestAgentsOfOneHostKeepTheirOwnLoggerAndModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		host := actorkit.Host{System: actorkit.NewSystem(nil)}
		defer host.System.Shutdown()
		sessions := session.NewSessions(nil)
		boom := agent.Func(func(context.Context, agent.Host, event.UserMessage) (agent.StopReason, error) {
			panic("boom")
		})
		var logs [2]bytes.Buffer
		var agents [2]*Activation
		for i := range agents {
			live, err := sessions.Create(bg, session.Header{ID: fmt.Sprintf("a%d", i)}, nil)
			require.NoError(t, err)
			impl := agent.Scripted(agent.Options{})
			if i == 1 {
				impl = boom
			}
			agents[i], err = Start(Config{Agent: impl, Session: live, Actors: host, Provider: "p", Model: fmt.Sprintf("m%d", i),
				Logger: slog.New(slog.NewTextHandler(&logs[i], nil))})
			require.NoError(t, err)
			followup(t, agents[i], "say hi")
		}
		synctest.Wait()
		require.NotSame(t, agents[0].kit, agents[1].kit, "a kit per logger")
		require.Empty(t, logs[0].String())
		require.Contains(t, logs[1].String(), "actors: turn panicked", "the failure is logged to its own agent's logger")
		var said []string
		for _, e := range agents[0].Session().Events() {
			if e.Type == "assistant/message" {
				said = append(said, string(e.Data))
			}
		}
		require.NotEmpty(t, said)
		require.Contains(t, strings.Join(said, "\n"), `"provider":"p","model":"m0"`)
		for _, a := range agents {
			require.NoError(t, a.Dispose(bg))
		}
	})
}

// listDispatcher is a dispatcher of a type that cannot be compared.
type listDispatcher struct{ ran []int }

func (listDispatcher) Schedule(fn func()) { go fn() }
func (listDispatcher) Throughput() int    { return 300 }

var _ actor.Dispatcher = listDispatcher{}

func TestAHostWhoseDispatcherCannotBeComparedGetsAKitEachTime(t *testing.T) {
	host := actorkit.Host{System: actorkit.NewSystem(nil), Dispatcher: listDispatcher{}}
	defer host.System.Shutdown()
	logger := slog.New(slog.DiscardHandler)
	require.NotSame(t, kitFor(host, logger), kitFor(host, logger))
	host.Dispatcher = nil
	require.Same(t, kitFor(host, logger), kitFor(host, logger))
}

func TestASpawnProcessesItsStartedWithoutWakingTheDispatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &countingDispatcher{}
		tr := newTree(t)
		tr.host.Dispatcher = d
		p := tr.mustStart("p", agent.Scripted(agent.Options{}), nil)
		c := tr.mustStart("c", agent.Scripted(agent.Options{}), p)
		synctest.Wait()
		require.Equal(t, int32(1), d.runs.Load(), "only p's mailbox ran on the dispatcher, for c's spawn request; both Started were processed by their spawners")
		followup(t, c, "say hi")
		synctest.Wait()
		require.Equal(t, int32(2), d.runs.Load(), "a message wakes the dispatcher")
		require.Len(t, userTexts(t, c), 1, "and its turn ran")
		require.NoError(t, p.Dispose(bg))
	})
}
