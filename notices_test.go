package dsh

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

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
	require.Equal(t, Notice{Kind: SessionLive, SessionID: "s", Cwd: cwd, Blank: true}, live)
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
