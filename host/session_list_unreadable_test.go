package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/stretchr/testify/require"
)

// plantUnreadableLog writes a stored session folder id whose log's header
// names another session, which fails the store's listing.
func plantUnreadableLog(t *testing.T, root, id string) string {
	t.Helper()
	path, err := logpath.Path(root, "", id)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(
		`{"type":"session","version":0,"id":"someone-else","createdAt":1,"delegationDepth":0}`+"\n"), 0o644))
	return path
}

// TestSessionListNamesAnUnreadableSession: a stored entry the store cannot
// list fails session.list with an internal error that names it (the page
// shows it), not a bare "session list failed".
func TestSessionListNamesAnUnreadableSession(t *testing.T) {
	root := t.TempDir()
	_, b := openRuntime(t, root)
	path := plantUnreadableLog(t, root, "broken-log")
	h := newTestHandler(t, b)
	r := callRPC(t, h, "session.list", map[string]any{})
	require.False(t, r.Result.OK, string(r.Result.Value))
	require.Equal(t, codeInternal, r.Result.Error.Code)
	require.Contains(t, r.Result.Error.Message, `session list failed: corrupt session log "`+path+`": header id "someone-else"`)
}
