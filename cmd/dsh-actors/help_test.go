package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestHelpExitsZero: asking for help, of the CLI or of one command, prints
// the usage on stdout and exits 0; a usage mistake is still exit 2 on
// stderr.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, stdout, stderr := run(t, args...)
		require.Equal(t, 0, code, args)
		require.Empty(t, stderr)
		require.Contains(t, stdout, "usage: dsh-actors <command> [flags]")
		require.Contains(t, stdout, "  send ")
	}
	for name := range commands {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {name, "-help"}} {
			code, stdout, stderr := run(t, args...)
			require.Equal(t, 0, code, args)
			require.Empty(t, stderr, args)
			require.Contains(t, stdout, "usage: dsh-actors "+name, args)
		}
	}
	code, stdout, stderr := run(t)
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "usage: dsh-actors <command>")
	code, _, stderr = run(t, "list", "--bogus")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "flag provided but not defined")
}

// TestStressHelpExplainsTheSummary: every field of stress's summary line is
// explained in its --help, followups=accepted/rejected among them.
func TestStressHelpExplainsTheSummary(t *testing.T) {
	code, stdout, _ := run(t, "stress", "--help")
	require.Equal(t, 0, code)
	for _, field := range []string{"activations=", "children=", "followups=A/R", "accepted", "rejected", "logged=",
		"discarded=", "lost=", "drains=", "sessions=", "violations=", "leaked_goroutines="} {
		require.Contains(t, stdout, field)
	}
}

// TestMissingStoreIsNamed: the reading commands name a --store that does not
// exist instead of reporting the session as not found, and create nothing.
func TestMissingStoreIsNamed(t *testing.T) {
	root := filepath.Join(t.TempDir(), "nowhere")
	for _, args := range [][]string{
		{"list", "--store", root, "p"},
		{"show", "--store", root, "p"},
		{"send", "--store", root, "p", "c", "reply hi"},
	} {
		code, stdout, stderr := run(t, args...)
		require.Equal(t, 1, code, args)
		require.Empty(t, stdout)
		require.Equal(t, fmt.Sprintf("dsh-actors %s: store %q does not exist (--store names the folder serve or demo wrote; default %s)\n",
			args[0], root, defaultStore()), stderr)
		_, err := os.Stat(root)
		require.ErrorIs(t, err, os.ErrNotExist)
	}
}

// TestShowFullPrintsWholeMessages: show cuts a long message to one line;
// --full prints it whole, its later lines indented to the summary column.
func TestShowFullPrintsWholeMessages(t *testing.T) {
	long := strings.Repeat("word ", 30) + "end"
	root := storeWith(t, "long", logEvent(0, "user/message",
		`{"content":[{"type":"text","text":"`+long+`\nsecond line"}],"source":{"kind":"user"},"role":"user","id":"m1"}`))
	code, stdout, stderr := run(t, "show", "--store", root, "long")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "…\n")
	require.NotContains(t, stdout, "end")

	code, stdout, stderr = run(t, "show", "--full", "--store", root, "long")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Equal(t, []string{
		"    0  user/message          " + long,
		strings.Repeat(" ", summaryColumn) + "second line",
	}, lines[1:])
}

// storeWith is a store holding one top-level session id with events.
func storeWith(t *testing.T, id string, events ...session.Event) string {
	t.Helper()
	root := t.TempDir()
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	require.NoError(t, store.Create(context.Background(), session.Header{ID: id, CreatedAt: 1}, events))
	require.NoError(t, store.Close())
	return root
}
