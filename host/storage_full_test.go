package host

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestSessionPromptAnswersStorageFullWhileTheDiskIsFull: once a full disk
// failed a session's log, session.prompt answers storage-full (nothing is
// acknowledged that could not be logged) and the failed agent leaves the
// process; while the disk has no room a prompt is refused again without
// resuming it; when the disk has room again, the next prompt resumes the
// session from its log and is logged.
func TestSessionPromptAnswersStorageFullWhileTheDiskIsFull(t *testing.T) {
	ctx := context.Background()
	faults := faultfs.New(nil)
	rt, err := actors.New(actors.Options{Root: t.TempDir(), StoreOptions: []session.Option{session.WithFS(faults)}})
	require.NoError(t, err)
	q := query.New(rt.Sessions())
	b := newRuntimeBackend(rt, catalogOnly{q}, q, nil)
	h := newHandler(b, Options{Cwd: t.TempDir()})
	t.Cleanup(func() {
		h.Close()
		b.close()
		_ = rt.Close(ctx) // the failed log's release fails
	})
	prompt := func(text string) response {
		return callRPC(t, h, "session.prompt", map[string]any{"sessionId": "full-1", "mode": "queue",
			"content": []map[string]any{{"type": "text", "text": text}}})
	}
	idle := func() {
		agent := rt.Registry().Get("full-1")
		require.NotNil(t, agent, "full-1 is live")
		require.NoError(t, agent.Activation().WhenIdle(ctx))
	}
	require.True(t, callRPC(t, h, "session.create", map[string]any{"sessionId": "full-1", "cwd": h.opts.Cwd}).Result.OK)
	require.True(t, prompt("reply kept").Result.OK)
	idle()
	durable, err := rt.Sessions().Flush(ctx, rt.Sessions().Get("full-1"))
	require.NoError(t, err)
	require.True(t, durable, "reply kept is on disk before it fills up")

	faults.SetFull(true)
	require.True(t, prompt("reply lost to the disk").Result.OK, "the log has not failed yet")
	idle()
	_, err = rt.Sessions().Flush(ctx, rt.Sessions().Get("full-1"))
	require.ErrorIs(t, err, session.ErrLogFailed, "the full disk failed the log")
	r := prompt("reply refused")
	require.NotNil(t, r.Result.Error, "acknowledged once the log failed")
	require.Equal(t, codeStorageFull, r.Result.Error.Code)
	require.Equal(t, `session "full-1" cannot be written: the disk is full; retry once it has room`, r.Result.Error.Message)
	require.Equal(t, map[string]any{"sessionId": "full-1"}, r.Result.Error.Details)
	require.Nil(t, rt.Registry().Get("full-1"), "the failed agent left the process")
	room := false
	b.roomOnDisk = func() bool { return room }
	r = prompt("reply refused again")
	require.NotNil(t, r.Result.Error, "acknowledged while the disk has no room")
	require.Equal(t, codeStorageFull, r.Result.Error.Code)
	require.Nil(t, rt.Registry().Get("full-1"), "not resumed while the disk has no room")
	room = true

	faults.SetFull(false)
	require.True(t, prompt("reply after room came back").Result.OK)
	idle()
	log, err := q.ReadSession(ctx, "full-1")
	require.NoError(t, err)
	var texts []string
	for _, e := range log.Events {
		if e.Type == "user/message" {
			texts = append(texts, string(e.Data))
		}
	}
	joined := strings.Join(texts, "\n")
	require.Contains(t, joined, "reply kept")
	require.Contains(t, joined, "reply after room came back")
	require.NotContains(t, joined, "reply refused")
}
