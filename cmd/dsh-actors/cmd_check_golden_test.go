package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// updateCheckGolden rewrites testdata/check.* from the command's output.
var updateCheckGolden = flag.Bool("update-check-golden", false, "rewrite testdata/check.* from the check command's output")

// damagedStore is testStore with one problem of every kind check names
// without a compressed log: an unreadable header, a torn tail, committed
// damage, a leftover temporary file, an empty session folder, a flat-layout
// log and a log of the other encoding.
func damagedStore(t *testing.T) string {
	t.Helper()
	root := testStore(t)
	project := filepath.Join(root, "--work--")
	require.NoError(t, os.WriteFile(filepath.Join(project, "fork", "session.jsonl"), []byte("{oops\n"), 0o600))
	appendTo := func(path, text string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString(text)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	appendTo(filepath.Join(project, "parent", "session.jsonl"), `{"type":"turn/start","seq":0,`)
	childB := filepath.Join(project, "child-b", "session.jsonl")
	body, err := os.ReadFile(childB)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(body), "\n")
	lines[2] = "{bad\n"
	require.NoError(t, os.WriteFile(childB, []byte(strings.Join(lines, "")), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(project, "child-a", "session.jsonl.0123456789ab.tmp"), []byte("x"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(project, "gone"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(project, "flat.jsonl"), []byte("{}\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(project, "other"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(project, "other", "session.jsonl.zstd"), []byte("x"), 0o600))
	return root
}

// zstdStore is a compressed store whose one log ends in a torn frame.
func zstdStore(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	store, err := session.OpenJSONL(root, session.WithCompression(session.CompressionZstd))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, store.Create(ctx, session.Header{ID: "zparent", CreatedAt: 1, Cwd: "/work"}, nil))
	require.NoError(t, store.Append(ctx, "zparent", []session.Event{logEvent(0, "turn/start", `{"turn":1}`)}))
	require.NoError(t, store.Close())
	path := filepath.Join(root, "--work--", "zparent", "session.jsonl.zstd")
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, info.Size()-3))
	return root
}

// The output of check, text and JSON, stays byte for byte what it was
// when the check was a method of the session package's store (ROOT in
// testdata/check.* stands for the store folder).
func TestCheckOutputIsByteForByte(t *testing.T) {
	for _, c := range []struct {
		name  string
		store func(*testing.T) string
	}{{"check", damagedStore}, {"check-zstd", zstdStore}} {
		root := c.store(t)
		for _, format := range []struct {
			ext  string
			args []string
		}{{"txt", []string{"check", "--store", root}}, {"json", []string{"check", "--json", "--store", root}}} {
			code, out, stderr := run(t, format.args...)
			require.Equal(t, 1, code, stderr)
			require.Empty(t, stderr)
			golden := filepath.Join("testdata", c.name+"."+format.ext)
			got := strings.ReplaceAll(out, root, "ROOT")
			if *updateCheckGolden {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.Equal(t, string(want), got, golden)
		}
	}
}
