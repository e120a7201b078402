package host

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSessionPromptAnswersStorageFullWhileTheDiskIsFull: a prompt the
// runtime refuses because a full disk failed the session's log (ENOSPC)
// is session.prompt's storage-full naming the session.
func TestSessionPromptAnswersStorageFullWhileTheDiskIsFull(t *testing.T) {
	f := newFakeBackend()
	f.promptErr = fmt.Errorf(`dsh: session "full-1": the disk of its log is still full: %w`, syscall.ENOSPC)
	h := newHandler(f, Options{Cwd: t.TempDir()})
	t.Cleanup(h.Close)
	r := callRPC(t, h, "session.prompt", map[string]any{"sessionId": "full-1", "mode": "queue",
		"content": []map[string]any{{"type": "text", "text": "reply refused"}}})
	require.NotNil(t, r.Result.Error)
	require.Equal(t, codeStorageFull, r.Result.Error.Code)
	require.Equal(t, `session "full-1" cannot be written: the disk is full; retry once it has room`, r.Result.Error.Message)
	require.Equal(t, map[string]any{"sessionId": "full-1"}, r.Result.Error.Details)
}
