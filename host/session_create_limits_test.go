package host

import (
	"encoding/json"
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
