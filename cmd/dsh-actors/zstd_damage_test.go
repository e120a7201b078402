package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// toZstd rewrites every log of root as the original's Zstandard log: the
// header line in the first frame, then each event line in a frame of its
// own. It returns the frame starts of each log, by path.
func toZstd(t *testing.T, root string) map[string][]int {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	require.NoError(t, err)
	defer enc.Close()
	starts := map[string][]int{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != logpath.FileName {
			return err
		}
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var out []byte
		for _, line := range strings.SplitAfter(string(raw), "\n") {
			if line != "" {
				starts[path+".zstd"] = append(starts[path+".zstd"], len(out))
				out = enc.EncodeAll([]byte(line), out)
			}
		}
		require.NoError(t, os.WriteFile(path+".zstd", out, 0o600))
		return os.Remove(path)
	}))
	return starts
}

// Damage before the last frame of a Zstandard log (a block size grown past
// the end of the file by one flipped bit) is refused by show and send
// naming the file and the frame: show prints no prefix as if it were the
// whole log, and send cuts nothing into .broken.
func TestZstdDamageBeforeTheLastFrameIsRefused(t *testing.T) {
	s := newSentStore(t)
	starts := toZstd(t, s.root)
	path, err := logpath.Path(s.root, "", s.child)
	require.NoError(t, err)
	matches, err := filepath.Glob(filepath.Join(s.root, "*", filepath.Base(filepath.Dir(path)), logpath.FileName+".zstd"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	path = matches[0]
	frames := starts[path]
	require.Greater(t, len(frames), 4)
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	damaged := frames[2]
	blockAt := damaged + 4 + 1 + 1 // magic, descriptor, window (not single-segment) or content size
	if file[damaged+4]&0x20 != 0 {
		blockAt = damaged + 4 + 1 + [4]int{1, 2, 4, 8}[file[damaged+4]>>6]
	}
	file[blockAt+2] ^= 0x80 // block size += 1 MiB: past the end of the file
	require.NoError(t, os.WriteFile(path, file, 0o600))
	where := fmt.Sprintf("frame at byte %d", damaged)

	code, stdout, stderr := run(t, "show", "--store", s.root, s.child)
	require.Equal(t, 1, code, stdout)
	require.Contains(t, stderr, where)
	require.Contains(t, stderr, path)

	code, _, stderr = run(t, "send", "--store", s.root, "alpha", s.child, "reply again")
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, where)
	onDisk, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(file, onDisk), "nothing is cut")
	_, err = os.Stat(path + ".broken")
	require.ErrorIs(t, err, os.ErrNotExist)
}
