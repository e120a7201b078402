package activation

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// stored is an agent over a session written to a JSONL store through a
// FaultFS holding its syncs on demand.
type stored struct {
	*Activation
	store *session.JSONL
	reg   *session.Sessions
	gates *faultfs.FS
}

// startStored is start with the session kept in a JSONL store. The
// activation is disposed, the session released and the store closed when
// the test ends.
func startStored(t *testing.T, impl agent.Agent, options ...func(*Config)) *stored {
	t.Helper()
	gates := faultfs.New(nil)
	store, err := session.OpenJSONL(t.TempDir(), session.WithFS(gates))
	require.NoError(t, err)
	reg := session.NewSessions(store)
	live, err := reg.Create(bg, session.Header{ID: "agent-1", Cwd: "/work"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { // after the activation's disposal
		require.NoError(t, reg.Release(bg, live))
		require.NoError(t, store.Close())
	})
	a := startOn(t, live, impl, gates.ReleaseSyncs, options...)
	return &stored{Activation: a, store: store, reg: reg, gates: gates}
}

// onDisk renders the events stored for the agent, read from the file
// without any Flush, as "type data" lines.
func (s *stored) onDisk(t *testing.T) []string {
	t.Helper()
	log, err := s.store.Inspect(bg, s.id())
	require.NoError(t, err)
	lines := make([]string, 0, len(log.Events))
	for _, e := range log.Events {
		lines = append(lines, e.Type+" "+string(e.Data))
	}
	return lines
}

// sleepMessage is the logged user/message of followup's "sleep 1h" with id.
func sleepMessage(id string) string {
	return `user/message {"content":[{"type":"text","text":"sleep 1h"}],"source":{"kind":"user"},"role":"user","id":"` + id + `"}`
}

func TestCancelledTurnEndIsDurableBeforeTheInboxIsReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := startStored(t, agent.Scripted(agent.Options{}))
		id := followup(t, a.Activation, "sleep 1h")
		synctest.Wait() // the turn sleeps; turn/start and user/message were written behind

		a.gates.HoldSyncs()
		a.Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
		synctest.Wait()
		require.Equal(t, inbox.Running, a.Status(), "the turn goroutine holds the inbox while it writes its turn/end")

		a.gates.ReleaseSyncs()
		require.NoError(t, a.WhenIdle(bg))
		require.Equal(t, []string{
			`turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
			sleepMessage(id),
			`turn/end {"turn":1,"reason":{"kind":"aborted"}}`,
		}, a.onDisk(t), "the turn/end is on disk once idle, without a Flush")
	})
}

func TestCompletedTurnEndIsWrittenBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := startStored(t, agent.Scripted(agent.Options{}))
		a.gates.HoldSyncs()
		followup(t, a.Activation, "reply hi")
		require.NoError(t, a.WhenIdle(bg), "a completed turn does not wait for the disk")
		a.gates.ReleaseSyncs()
		ok, err := a.reg.Flush(bg, a.Session())
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, `turn/end {"turn":1,"reason":{"kind":"completed"}}`, a.onDisk(t)[5])
	})
}

func TestDisposeReturnsWithTheTurnEndDurable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := startStored(t, agent.Scripted(agent.Options{}))
		id := followup(t, a.Activation, "sleep 1h")
		followup(t, a.Activation, "reply queued")
		synctest.Wait()

		a.gates.HoldSyncs()
		disposed := make(chan error)
		go func() { disposed <- a.Dispose(bg) }()
		synctest.Wait()
		select {
		case err := <-disposed:
			t.Fatalf("Dispose returned (%v) before the cancelled turn's end was durable", err)
		default:
		}
		a.gates.ReleaseSyncs()
		require.NoError(t, <-disposed)
		require.Equal(t, []string{
			`turn/start {"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`,
			sleepMessage(id),
			`turn/end {"turn":1,"reason":{"kind":"disposed"}}`,
		}, a.onDisk(t))
	})
}

// countingDispatcher runs every mailbox run on a new goroutine and counts
// them.
type countingDispatcher struct{ runs atomic.Int32 }

func (d *countingDispatcher) Schedule(fn func()) {
	d.runs.Add(1)
	go fn()
}

func (d *countingDispatcher) Throughput() int { return inbox.DefaultThroughput }

func TestDisposeStopsTheActorOnTheCallingGoroutine(t *testing.T) {
	for _, tc := range []struct{ name, text string }{{"idle", "reply hi"}, {"during a turn", "sleep 1h"}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &countingDispatcher{}
				a := start(t, agent.Scripted(agent.Options{}), func(c *Config) { c.Actors.Dispatcher = d })
				followup(t, a, tc.text)
				synctest.Wait()
				runs := d.runs.Load()
				require.Positive(t, runs, "the dispatcher runs the mailbox otherwise")

				require.NoError(t, a.Dispose(bg))
				select {
				case <-a.Done():
				default:
					t.Fatal("the actor has not stopped")
				}
				require.Equal(t, runs, d.runs.Load(), "the stop was processed without scheduling a mailbox run")
			})
		})
	}
}
