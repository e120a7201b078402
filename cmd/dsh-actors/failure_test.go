package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// A store root that is a regular file cannot be listed: every command
// that opens it fails with the query layer's persistence code, as a
// failed listing does.
func TestAnUnreadableStoreRootNamesThePersistenceCode(t *testing.T) {
	root := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(root, []byte("x\n"), 0o600))
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	cause := "open session root " + abs + ": not a directory"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--store", root, "parent"}, "dsh-actors list: SESSION_QUERY_PERSISTENCE_FAILED: session persistence listing failed: " + cause + "\n"},
		{[]string{"show", "--store", root, "parent"}, "dsh-actors show: SESSION_QUERY_PERSISTENCE_FAILED: session persistence listing failed: " + cause + "\n"},
		{[]string{"demo", "--store", root}, "dsh-actors demo: SESSION_QUERY_PERSISTENCE_FAILED: session persistence failed: " + cause + "\n"},
		{[]string{"serve", "--store", root, "--addr", "127.0.0.1:0"}, "dsh-actors serve: SESSION_QUERY_PERSISTENCE_FAILED: session persistence failed: " + cause + "\n"},
		{[]string{"stress", "--store", root, "--forests", "1", "--fanout", "1", "--depth", "1", "--followups", "1"}, "dsh-actors stress: SESSION_QUERY_PERSISTENCE_FAILED: session persistence failed: " + cause + "\n"},
		{[]string{"check", "--store", root}, "dsh-actors check: SESSION_QUERY_PERSISTENCE_FAILED: session persistence failed: " + cause + "\n"},
		{[]string{"search", "--store", root, "x"}, "dsh-actors search: SESSION_QUERY_PERSISTENCE_FAILED: session persistence listing failed: " + cause + "\n"},
		{[]string{"run", "--store", root, "x"}, "dsh-actors run: SESSION_QUERY_PERSISTENCE_FAILED: session persistence failed: " + cause + "\n"},
	} {
		code, stdout, stderr := run(t, tc.args...)
		require.Equal(t, 1, code, fmt.Sprint(tc.args))
		require.Empty(t, stdout, tc.args)
		require.Equal(t, tc.want, stderr, tc.args)
	}
}

// writeRaw writes one raw log line by line under root.
func writeRaw(t *testing.T, root, cwd, id string, lines ...string) {
	t.Helper()
	path, err := logpath.Path(root, cwd, id)
	require.NoError(t, err)
	dir := filepath.Dir(path)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	var b bytes.Buffer
	for _, line := range lines {
		b.WriteString(line + "\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "session.jsonl"), b.Bytes(), 0o600))
}

// demo prints the code of the listing failure it meets, as list does for
// the same store.
func TestDemoNamesTheCodeOfAListingFailure(t *testing.T) {
	store := t.TempDir()
	for _, cwd := range []string{"/work/a", "/work/b"} {
		writeRaw(t, store, cwd, "twice", `{"type":"session","version":0,"id":"twice","createdAt":1,"cwd":"`+cwd+`","delegationDepth":0}`)
	}
	var code int
	var stderr string
	synctest.Test(t, func(t *testing.T) { code, _, stderr = run(t, "demo", "--store", store) })
	require.Equal(t, 1, code)
	require.Regexp(t, `^dsh-actors demo: SESSION_QUERY_PERSISTENCE_FAILED: session persistence listing failed: duplicate JSONL session id "twice"`, stderr)

	code, _, stderr = run(t, "list", "--store", store, "twice")
	require.Equal(t, 1, code)
	require.Regexp(t, `^dsh-actors list: SESSION_QUERY_PERSISTENCE_FAILED: session persistence listing failed: duplicate JSONL session id "twice"`, stderr)
}

// failure names the outermost code in the error's chain, whichever layer
// it comes from; a cancellation is CANCELLED; an error without a code is
// printed as it is.
func TestFailureNamesTheOutermostCode(t *testing.T) {
	queryErr := &fault.Error{Code: fault.QuerySessionNotFound, Message: `session "p" not found`}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{queryErr, `x: SESSION_QUERY_SESSION_NOT_FOUND: session "p" not found`},
		{fmt.Errorf("wrapped: %w", queryErr), `x: SESSION_QUERY_SESSION_NOT_FOUND: wrapped: session "p" not found`},
		{fault.New(fault.Draining, "draining", nil), "x: DRAINING: draining"},
		{&fault.Error{Code: "NOT_RESUMABLE", Message: "not resumable", Cause: queryErr}, "x: NOT_RESUMABLE: not resumable"},
		{errors.Join(errors.New("plain"), fault.New(fault.InboxClosed, "actors: inbox is closed", nil)), "x: INBOX_CLOSED: plain\nactors: inbox is closed"},
		{fmt.Errorf("turn: %w", context.Canceled), "x: CANCELLED: turn: context canceled"},
		{errors.New("no code"), "x: no code"},
	} {
		var stderr bytes.Buffer
		require.Equal(t, 1, failure(&stderr, "x", tc.err))
		require.Equal(t, "dsh-actors "+tc.want+"\n", stderr.String())
	}
}
