package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// runCancelled dispatches with an already cancelled context, so a command
// that wrongly accepts a huge size stops at once (exit 1) instead of
// running it; a usage error is still exit 2.
func runCancelled(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := dispatch(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// Sizes whose work grows without bound (a tree of fanout^depth agents,
// millions of idle agents or workers) are refused as usage errors before
// anything runs, instead of exhausting memory with a Go runtime trace.
func TestSizeFlagsHaveCeilings(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"stress", "--depth", "100"}, "--forests×(--fanout + … + --fanout^--depth) must be at most 100000 agents"},
		{[]string{"stress", "--fanout", "1000", "--depth", "2"}, "must be at most 100000 agents"},
		{[]string{"stress", "--forests", "1000000"}, "must be at most 100000 agents"},
		{[]string{"stress", "--workers", "100000000"}, "--workers must be at most 10000, got 100000000"},
		{[]string{"bench", "--agents", "99999999999"}, "--agents must be at most 1000000, got 99999999999"},
		{[]string{"bench", "--depth", "100"}, "--fanout + … + --fanout^--depth must be at most 100000 agents"},
		{[]string{"bench", "--quick", "--fanout", "100000"}, "must be at most 100000 agents"},
		{[]string{"bench", "--sessions", "100000000"}, "--sessions must be at most 100000, got 100000000"},
	}
	for _, c := range cases {
		code, stdout, stderr := runCancelled(t, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Empty(t, stdout, c.args)
		require.Contains(t, stderr, c.msg, c.args)
		require.Contains(t, stderr, "usage: dsh-actors "+c.args[0], c.args)
	}
}

func TestDescendantsSaturates(t *testing.T) {
	require.Equal(t, 3+9+27, descendants(3, 3, 1000))
	require.Equal(t, 10+100+1000+10000, descendants(10, 4, 100_000))
	require.Equal(t, 4, descendants(1, 4, 100))
	require.Equal(t, 101, descendants(3, 100, 100))
	require.Equal(t, 101, descendants(1<<40, 3, 100))
}

// A malformed --addr is a usage error naming the flag, refused before
// anything is opened; only a well-formed address that cannot be bound is a
// failure (exit 1).
func TestServeRefusesMalformedAddr(t *testing.T) {
	store := t.TempDir()
	for _, addr := range []string{"nonsense", "127.0.0.1:99999", "127.0.0.1:nosuchservice", "127.0.0.1:-1", "[::1"} {
		code, stdout, stderr := runCancelled(t, "serve", "--store", store, "--addr", addr)
		require.Equal(t, 2, code, "%s: %s", addr, stderr)
		require.Empty(t, stdout, addr)
		require.Contains(t, stderr, "--addr "+strconv.Quote(addr)+" is not host:port", addr)
		require.Contains(t, stderr, "usage: dsh-actors serve", addr)
	}
}

// An empty --store is a usage error naming the flag, not the current
// folder taken as the store root.
func TestAnEmptyStoreIsAUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"list", "--store", "", "parent"},
		{"list", "--store=", "parent"},
		{"show", "--store", "", "id"},
		{"demo", "--store", ""},
		{"serve", "--store", "", "--addr", "127.0.0.1:0"},
		{"stress", "--store", ""},
	} {
		code, stdout, stderr := runCancelled(t, args...)
		require.Equal(t, 2, code, args)
		require.Empty(t, stdout, args)
		require.Contains(t, stderr, "dsh-actors "+args[0]+`: --store must name a folder, got ""`, args)
		require.Contains(t, stderr, "usage: dsh-actors "+args[0], args)
	}
}

// A context window below one token, or an empty run PROMPT, is a usage
// error naming the flag or argument, refused before anything is opened;
// both used to run (the window silently taken as unknown, the prompt as
// an empty turn) while send refused an empty TEXT. A PROMPT of only
// whitespace is as empty (the original's composer sends no draft whose
// trimmed text is empty) and used to run a blank turn too.
func TestContextWindowAndRunPromptAreChecked(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"run", "--model", "m", "--context-window", "-5", "hi"}, `invalid value "-5" for flag -context-window: must be a positive number of tokens`},
		{[]string{"run", "--context-window", "0", "hi"}, `invalid value "0" for flag -context-window: must be a positive number of tokens`},
		{[]string{"serve", "--context-window", "-1"}, `invalid value "-1" for flag -context-window: must be a positive number of tokens`},
		{[]string{"acp", "--context-window", "-1"}, `invalid value "-1" for flag -context-window: must be a positive number of tokens`},
		{[]string{"run", "--context-window", "x", "hi"}, `invalid value "x" for flag -context-window: must be a positive number of tokens`},
		{[]string{"run", ""}, "PROMPT must not be empty"},
		{[]string{"run", " \t\n "}, "PROMPT must not be only whitespace"},
	}
	for _, c := range cases {
		store := t.TempDir()
		code, stdout, stderr := runCancelled(t, append([]string{c.args[0], "--store", store}, c.args[1:]...)...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		require.Empty(t, stdout, c.args)
		require.Contains(t, stderr, c.msg, c.args)
		require.Contains(t, stderr, "usage: dsh-actors "+c.args[0], c.args)
		entries, err := os.ReadDir(store)
		require.NoError(t, err)
		require.Empty(t, entries, "%v wrote nothing", c.args)
	}
}
