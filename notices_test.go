package dsh

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// Subscribe reports a session becoming live (blank), its prompt accepted
// and claimed, its running edges and its appended events in log order,
// and its release; nothing after cancel.
func TestSubscribeReportsASessionsLife(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	var mu sync.Mutex
	var kinds []NoticeKind
	var seqs []int64
	var live Notice
	cancel := rt.Subscribe(func(n Notice) {
		mu.Lock()
		defer mu.Unlock()
		if n.SessionID != "s" {
			return
		}
		kinds = append(kinds, n.Kind)
		switch n.Kind {
		case SessionAppended:
			seqs = append(seqs, n.Event.Seq)
		case SessionLive:
			live = n
		}
	})
	cwd := t.TempDir()
	require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: "s", Cwd: cwd}))
	messageID, err := rt.PromptSession(bg, "s", event.Text("reply hi"), user)
	require.NoError(t, err)
	idle(t, rt, "s")
	require.NoError(t, rt.Close())
	cancel()
	cancel()

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, Notice{Kind: SessionLive, SessionID: "s", Cwd: cwd, Blank: true, LastSeq: -1}, live)
	for _, k := range []NoticeKind{SessionLive, MessageAccepted, SessionRunning, MessageLeft, SessionAppended, SessionReleased} {
		require.Contains(t, kinds, k)
	}
	require.Less(t, slices.Index(kinds, MessageAccepted), slices.Index(kinds, MessageLeft))
	require.Equal(t, SessionReleased, kinds[len(kinds)-1])
	require.NotEmpty(t, messageID)
	for i := range seqs {
		require.Equal(t, int64(i), seqs[i], "appended events arrive in log order")
	}
}

// A message claimed by a turn leaves the inbox not discarded; one that a
// cancel discards before it ran leaves it discarded.
func TestSubscribeTellsADiscardedMessageFromAClaimedOne(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	left := make(chan Notice, 8)
	defer rt.Subscribe(func(n Notice) {
		if n.Kind == MessageLeft {
			left <- n
		}
	})()
	next := func(what string) Notice {
		t.Helper()
		select {
		case n := <-left:
			return n
		case <-time.After(10 * time.Second):
			t.Fatalf("no MessageLeft notice for the %s message", what)
			return Notice{}
		}
	}
	require.NoError(t, rt.OpenSession(bg, SessionSpec{ID: "s", Cwd: t.TempDir()}))
	running, err := rt.PromptSession(bg, "s", event.Text("sleep 1h"), user)
	require.NoError(t, err)
	claimed := next("claimed")
	require.Equal(t, running, claimed.MessageID)
	require.False(t, claimed.Discarded, "a turn claimed it")

	queued, err := rt.PromptSession(bg, "s", event.Text("reply never"), user)
	require.NoError(t, err)
	require.NoError(t, rt.CancelTurn(bg, "s", false))
	dropped := next("queued")
	require.Equal(t, queued, dropped.MessageID)
	require.True(t, dropped.Discarded, "the cancel discarded it unrun")
	idle(t, rt, "s")
}

// A continuable child's epochs are reported started and ended, each
// naming the child and its parent, the first epoch's end before the
// cold-resumed one's start.
func TestSubscribeReportsAChildsEpochs(t *testing.T) {
	rt := open(t, Options{Dir: t.TempDir()})
	var mu sync.Mutex
	var runs []Notice
	defer rt.Subscribe(func(n Notice) {
		if n.Kind == ChildStarted || n.Kind == ChildEnded {
			mu.Lock()
			defer mu.Unlock()
			runs = append(runs, n)
		}
	})()
	p, err := rt.StartAgent(bg, "p")
	require.NoError(t, err)
	child, err := rt.Spawn(bg, p, "worker", event.Text("reply one"))
	require.NoError(t, err)
	_, ok, err := rt.WaitChild(bg, child)
	require.True(t, ok)
	require.NoError(t, err)
	_, err = rt.Send(bg, p, child, event.Text("reply two"))
	require.NoError(t, err)
	_, ok, err = rt.WaitChild(bg, child)
	require.True(t, ok)
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	epoch := func(reply string) []Notice {
		return []Notice{
			{Kind: ChildStarted, SessionID: child, ParentSessionID: "p", Provider: "spawn", Label: "worker"},
			{Kind: ChildEnded, SessionID: child, ParentSessionID: "p", Provider: "spawn",
				End: agent.ChildEnd{StopReason: agent.Completed, LastAssistantMessage: event.Text(reply)}},
		}
	}
	require.Equal(t, slices.Concat(epoch("one"), epoch("two")), runs)
}
