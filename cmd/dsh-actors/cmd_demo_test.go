package main

import (
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// The demo grows a tree, follows up, drains child-first, lists every
// parent, and leaves a store that `list` reads.
// It runs in a synctest bubble, so its pauses take no real time.
func TestDemoLeavesAListableStore(t *testing.T) {
	store := t.TempDir()
	var code int
	var stdout, stderr string
	synctest.Test(t, func(t *testing.T) { code, stdout, stderr = run(t, "demo", "--store", store) })
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 5, strings.Count(stdout, "subagent/start "))
	require.Equal(t, 5, strings.Count(stdout, "subagent/end "))
	require.Contains(t, stdout, "draining every continuable descendant")
	root := regexp.MustCompile(`top-level agent (demo-[0-9a-f]+)`).FindStringSubmatch(stdout)
	require.Len(t, root, 2)
	require.Contains(t, stdout, "list "+root[1]+":")

	code, listed, stderr := run(t, "list", "--store", store, root[1])
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 3, strings.Count(listed, "[complete]"))
	for _, label := range []string{"researcher", "writer", "reviewer"} {
		require.Contains(t, listed, "— "+label)
	}
}

func TestDemoRejectsArguments(t *testing.T) {
	code, _, stderr := run(t, "demo", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, demoUsage)
}
