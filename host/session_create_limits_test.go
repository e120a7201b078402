package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSessionCreateRefusesIDsAndCwdsNoStoreCanHold: an empty cwd names no
// project folder and an id whose folder name would pass the file system's
// 255-byte limit cannot be stored; both are bad-requests naming the field,
// before anything reaches the runtime.
func TestSessionCreateRefusesIDsAndCwdsNoStoreCanHold(t *testing.T) {
	_, b := openRuntime(t, t.TempDir())
	h := newHandler(b, Options{Cwd: t.TempDir()})
	t.Cleanup(h.Close)
	cwd := t.TempDir()
	for _, tc := range []struct {
		name, payload, path string
	}{
		{"empty cwd", `{"cwd":""}`, "cwd"},
		{"cwd with NUL", `{"cwd":"/tmp/a\u0000b"}`, "cwd"},
		{"5000-character id", `{"sessionId":"` + strings.Repeat("a", 5000) + `","cwd":"` + cwd + `"}`, "sessionId"},
		{"id of 64 escaped characters", `{"sessionId":"` + strings.Repeat("é", 64) + `","cwd":"` + cwd + `"}`, "sessionId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := callRPC(t, h, "session.create", json.RawMessage(tc.payload))
			require.NotNil(t, r.Result.Error, "accepted")
			require.Equal(t, codeBadRequest, r.Result.Error.Code, r.Result.Error.Message)
			require.Equal(t, "invalid payload for session.create", r.Result.Error.Message)
			require.Equal(t, []string{tc.path}, issuePaths(r))
		})
	}
	longest := strings.Repeat("a", 255)
	r := callRPC(t, h, "session.create", json.RawMessage(`{"sessionId":"`+longest+`","cwd":"`+cwd+`"}`))
	require.True(t, r.Result.OK, "an id whose folder name is 255 bytes is stored")
}

// TestSessionCreateRefusesARelativeCwd: a relative cwd would name a folder
// under wherever the server happens to run; it is a bad-request naming
// cwd, and nothing is made.
func TestSessionCreateRefusesARelativeCwd(t *testing.T) {
	_, b := openRuntime(t, t.TempDir())
	h := newHandler(b, Options{Cwd: t.TempDir()})
	t.Cleanup(h.Close)
	t.Chdir(t.TempDir())
	for _, cwd := range []string{"rel/dir", "./here", "../up", "~/home"} {
		r := callRPC(t, h, "session.create", map[string]any{"cwd": cwd})
		require.NotNil(t, r.Result.Error, "accepted %q", cwd)
		require.Equal(t, codeBadRequest, r.Result.Error.Code, r.Result.Error.Message)
		require.Equal(t, []string{"cwd"}, issuePaths(r))
		require.Contains(t, fmt.Sprint(r.Result.Error.Details), "must be an absolute path")
	}
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	require.Empty(t, entries, "no folder made")
}

// TestSessionCreateKeepsCwdInItsRoot: with a CwdRoot, a requested cwd
// outside it (also through "..", or through a symbolic link inside the
// root that points out of it) is a bad-request and nothing is made; one
// inside is made and used; the default cwd is the operator's.
func TestSessionCreateKeepsCwdInItsRoot(t *testing.T) {
	_, b := openRuntime(t, t.TempDir())
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "escape")))
	h := newHandler(b, Options{Cwd: outside, CwdRoot: root})
	t.Cleanup(h.Close)
	for _, cwd := range []string{
		filepath.Join(outside, "made"),
		root + "/../" + filepath.Base(outside) + "/made",
		filepath.Join(root, "escape", "made"),
		"/",
	} {
		r := callRPC(t, h, "session.create", map[string]any{"cwd": cwd})
		require.NotNil(t, r.Result.Error, "accepted %q", cwd)
		require.Equal(t, codeBadRequest, r.Result.Error.Code, r.Result.Error.Message)
		require.Equal(t, []string{"cwd"}, issuePaths(r))
		require.Contains(t, fmt.Sprint(r.Result.Error.Details), "must be inside "+root)
	}
	_, err := os.Stat(filepath.Join(outside, "made"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing made outside the root")

	inside := filepath.Join(root, "a", "b")
	r := callRPC(t, h, "session.create", map[string]any{"cwd": inside})
	require.True(t, r.Result.OK, "%+v", r.Result.Error)
	require.DirExists(t, inside)
	r = callRPC(t, h, "session.create", map[string]any{"cwd": root})
	require.True(t, r.Result.OK, "the root itself: %+v", r.Result.Error)
	r = callRPC(t, h, "session.create", map[string]any{})
	require.True(t, r.Result.OK, "the default cwd: %+v", r.Result.Error)
}
