package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeTokenIsMadeOnceAndKeptInTheStore: the first start in a store
// folder makes a token only its owner can read; later starts use it.
func TestServeTokenIsMadeOnceAndKeptInTheStore(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	first := openTestStack(t, root, false)
	require.Len(t, first.token, 32)
	require.NoError(t, first.shutdown(&http.Server{}))
	info, err := os.Stat(filepath.Join(root, tokenFileName))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	second := openTestStack(t, root, false)
	t.Cleanup(func() { require.NoError(t, second.shutdown(&http.Server{})) })
	require.Equal(t, first.token, second.token)
}

// TestServeWantsTheTokenFromAnotherMachine: the served handler refuses a
// peer on another machine without the token (also one writing Host:
// 127.0.0.1) and lets it in with it; this machine's page needs none.
func TestServeWantsTheTokenFromAnotherMachine(t *testing.T) {
	stack, err := openServeStack(serveFlags{store: t.TempDir(), token: "given-token-0123456789"}, warnLogger(io.Discard), nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, stack.shutdown(&http.Server{})) })
	require.Equal(t, "given-token-0123456789", stack.token)
	call := func(host, peer, authorization string) int {
		req := httptest.NewRequest(http.MethodPost, "http://"+host+"/api/session.list",
			strings.NewReader(`{"type":"client-request","rpcId":"r","method":"session.list","payload":{}}`))
		req.RemoteAddr = peer
		req.Header.Set("Content-Type", "application/json")
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		rec := httptest.NewRecorder()
		stack.handler.ServeHTTP(rec, req)
		return rec.Code
	}
	require.Equal(t, http.StatusUnauthorized, call("127.0.0.1:7410", "192.0.2.7:4000", ""))
	require.Equal(t, http.StatusUnauthorized, call("dsh.lan:7410", "192.0.2.7:4000", "Bearer wrong-token-0123456789"))
	require.Equal(t, http.StatusOK, call("dsh.lan:7410", "192.0.2.7:4000", "Bearer given-token-0123456789"))
	require.Equal(t, http.StatusOK, call("127.0.0.1:7410", "127.0.0.1:4000", ""))
}

// TestServeTokenFlags: a token given by --token or the environment must be
// long enough and fit a header and an address; --cwd-root must be
// absolute.
func TestServeTokenFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--token", "short"}, "", "--token must be at least 16 characters"},
		{[]string{"--token", "has a space in it, long"}, "", "--token must be visible ASCII"},
		{[]string{"--token", "has#a-fragment-mark"}, "", "--token must be visible ASCII"},
		{nil, "short", tokenEnv + " must be at least 16 characters"},
		{[]string{"--cwd-root", "relative/root"}, "", `--cwd-root must be an absolute path, got "relative/root"`},
	} {
		t.Setenv(tokenEnv, tc.env)
		if tc.env == "" {
			require.NoError(t, os.Unsetenv(tokenEnv))
		}
		var stderr strings.Builder
		_, status := parseServeFlags(append([]string{"--store", t.TempDir()}, tc.args...), &stderr)
		require.Equal(t, 2, status, "%v", tc.args)
		require.Contains(t, stderr.String(), tc.want)
	}
	t.Setenv(tokenEnv, "from-the-environment")
	parsed, status := parseServeFlags([]string{"--store", t.TempDir()}, io.Discard)
	require.Equal(t, -1, status)
	require.Equal(t, "from-the-environment", parsed.token)
	parsed, status = parseServeFlags([]string{"--store", t.TempDir(), "--token", "from-the-flag-wins"}, io.Discard)
	require.Equal(t, -1, status)
	require.Equal(t, "from-the-flag-wins", parsed.token)
}
