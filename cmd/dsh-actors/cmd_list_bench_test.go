package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/storegen"
)

// BenchmarkListProcess measures a whole `dsh-actors list` process (start,
// open, list, exit) of a parent with D=1,000 children among C=10,000
// sessions, through the derived index an earlier process built and with
// --no-index, interleaved in one run. It reports the ratio
// unindexed/indexed (the indexed one costs O(D) plus a freshness check of
// the folders, the unindexed one reads the whole store) and each one's
// milliseconds per process.
//
//	go test -run '^$' -bench BenchmarkListProcess -benchtime 10x ./cmd/dsh-actors/
func BenchmarkListProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "dsh-actors")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(b, err, "%s", out)
	root := b.TempDir()
	_, err = storegen.Generate(root, storegen.Shape{Sessions: 10_000, Children: 1_000, Turns: 5})
	require.NoError(b, err)
	ageStore(b, root)
	list := func(args ...string) (time.Duration, []byte) {
		cmd := exec.Command(bin, append([]string{"list", "--store", root}, append(args, storegen.Parent)...)...)
		start := time.Now()
		out, err := cmd.Output()
		require.NoError(b, err)
		return time.Since(start), out
	}
	_, built := list() // the index is built once, by an earlier process
	_, unindexedOut := list("--no-index")
	require.True(b, bytes.Equal(built, unindexedOut), "both list alike")
	var indexed, unindexed time.Duration
	for b.Loop() {
		took, _ := list()
		indexed += took
		took, _ = list("--no-index")
		unindexed += took
	}
	b.ReportMetric(float64(unindexed)/float64(indexed), "unindexed/indexed")
	b.ReportMetric(float64(indexed.Milliseconds())/float64(b.N), "indexed-ms/op")
	b.ReportMetric(float64(unindexed.Milliseconds())/float64(b.N), "unindexed-ms/op")
}

// ageStore sets every file's and folder's mtime under root an hour back, as
// a store written earlier has them (a stamp younger than the file system's
// granularity allows is never trusted).
func ageStore(b *testing.B, root string) {
	old := time.Now().Add(-time.Hour)
	var dirs []string
	require.NoError(b, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		} else if err == nil {
			err = os.Chtimes(path, old, old)
		}
		return err
	}))
	for i := len(dirs) - 1; i >= 0; i-- {
		require.NoError(b, os.Chtimes(dirs[i], old, old))
	}
}
