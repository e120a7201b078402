package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/storegen"
)

// The raw baselines write every line and leave nothing running.
func TestRawBaselines(t *testing.T) {
	dir := t.TempDir()
	lines := [][]byte{[]byte("{\"a\":1}\n"), []byte("{\"b\":2}\n"), []byte("{\"c\":3}\n")}
	l, err := CreateRawLog(filepath.Join(dir, "raw.jsonl"))
	require.NoError(t, err)
	for _, line := range lines {
		l.Append(line, true)
	}
	require.NoError(t, l.Close())
	data, err := os.ReadFile(filepath.Join(dir, "raw.jsonl"))
	require.NoError(t, err)
	require.Equal(t, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n", string(data))

	_, err = RawAppend(dir, 4, repeat(lines, 10))
	require.NoError(t, err)
	_, err = RawPipelined(dir, 3, lines)
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the timed raw files are removed")

	ch := NewChannel()
	require.Equal(t, 1, ch.RoundTrip())
	ch.Close()
}

// The generated store lists its D children through a runtime and through
// the raw read alike.
func TestGeneratedCatalog(t *testing.T) {
	root := t.TempDir()
	size, err := GenerateStore(root, storegen.Shape{Sessions: 25, Children: 4, Turns: 1})
	require.NoError(t, err)
	require.Positive(t, size)
	ctx := context.Background()
	n, err := ListChildren(ctx, root)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	n, err = RawCatalogRead(root)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	_, err = GenerateStore(root, storegen.Shape{Sessions: 4, Children: 4})
	require.Error(t, err)
}

// The drain floor drains every node of its forests, leaves no file, actor
// or goroutine behind (goleak), and fails on a directory it cannot use.
func TestDrainFloor(t *testing.T) {
	dir := t.TempDir()
	samples, agents, err := DrainFloor(context.Background(), dir, 3, 2, 2)
	require.NoError(t, err)
	require.Len(t, samples, 2)
	require.Equal(t, 12, agents)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "each forest's logs are removed")

	notADir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notADir, nil, 0o644))
	_, _, err = DrainFloor(context.Background(), notADir, 3, 2, 1)
	require.ErrorContains(t, err, "drain floor")
}
