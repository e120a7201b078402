package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// plantUnreadableLog writes a stored session folder id whose log's header
// names another session, which fails the store's listing.
func plantUnreadableLog(t *testing.T, root, id string) string {
	t.Helper()
	path, err := logpath.Path(root, "", id)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	line := []byte(`{"type":"session","version":0,"id":"someone-else","createdAt":1,"delegationDepth":0}` + "\n")
	if zstdLogs, _ := filepath.Glob(filepath.Join(root, "*", "*", logpath.FileName+".zstd")); len(zstdLogs) > 0 {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
		require.NoError(t, err)
		defer enc.Close()
		path, line = path+".zstd", enc.EncodeAll(line, nil) // in the encoding of the store's logs
	}
	require.NoError(t, os.WriteFile(path, line, 0o644))
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
