package main

import (
	"path/filepath"
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

// demo --compression zstd writes the original's default encoding; list,
// show and check read that store without being told, and naming the
// other encoding for it is refused with the original's message.
func TestDemoWritesAZstdStoreTheReadersDetect(t *testing.T) {
	store := t.TempDir()
	var code int
	var stdout, stderr string
	synctest.Test(t, func(t *testing.T) {
		code, stdout, stderr = run(t, "demo", "--store", store, "--compression", "zstd")
	})
	require.Equal(t, 0, code, stderr)
	logs, err := filepath.Glob(filepath.Join(store, "*", "*", "session.jsonl*"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	for _, log := range logs {
		require.True(t, strings.HasSuffix(log, ".jsonl.zstd"), log)
	}
	root := regexp.MustCompile(`top-level agent (demo-[0-9a-f]+)`).FindStringSubmatch(stdout)
	require.Len(t, root, 2)
	code, listed, stderr := run(t, "list", "--store", store, root[1])
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 3, strings.Count(listed, "[complete]"))
	code, shown, stderr := run(t, "show", "--store", store, root[1])
	require.Equal(t, 0, code, stderr)
	require.NotEmpty(t, shown)
	code, checked, stderr := run(t, "check", "--store", store)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, checked, "no damage found")

	code, _, stderr = run(t, "demo", "--store", store, "--compression", "none")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `uses .jsonl.zstd, but this backend is configured for compression "none"`)
	code, _, stderr = run(t, "demo", "--compression", "gzip")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `--compression: compression must be "zstd" or "none", got "gzip"`)
}
