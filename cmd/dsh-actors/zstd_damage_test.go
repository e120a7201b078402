package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// logText is the plaintext of a stored log (see plainText).
func logText(t *testing.T, path string) string {
	t.Helper()
	text, err := plainText(path)
	require.NoError(t, err)
	return text
}

// plainText is the plaintext of a stored log: a Zstandard one decoded frame
// by frame up to the first frame that does not decode (one being written).
func plainText(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".zstd") {
		return string(raw), err
	}
	dec, err := zstd.NewReader(bytes.NewReader(raw), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return "", err
	}
	defer dec.Close()
	plain, _ := io.ReadAll(dec)
	return string(plain), nil
}

// frameStarts finds the byte offsets of the frame magics (28 B5 2F FD) in
// a Zstandard log the runtime wrote.
func frameStarts(file []byte) []int {
	var out []int
	for i := 0; i+4 <= len(file); i++ {
		if bytes.Equal(file[i:i+4], []byte{0x28, 0xB5, 0x2F, 0xFD}) {
			out = append(out, i)
		}
	}
	return out
}

// Damage before the last frame of a Zstandard log (a block size grown past
// the end of the file by one flipped bit) is refused by show and send
// naming the file and the frame: show prints no prefix as if it were the
// whole log, and send cuts nothing into .broken.
func TestZstdDamageBeforeTheLastFrameIsRefused(t *testing.T) {
	s := newSentStore(t, storeChoice{})
	code, _, stderr := run(t, "send", "--store", s.root, "alpha", s.child, "reply more")
	require.Zero(t, code, stderr)
	path := logPath(t, s.root, s.child)
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	frames := frameStarts(file)
	require.Greater(t, len(frames), 3, "the runtime writes a frame per batch")
	damaged := frames[2]
	descriptor := file[damaged+4]
	single, fcsFlag := descriptor&0x20 != 0, descriptor>>6
	fcsBytes := [4]int{0, 2, 4, 8}[fcsFlag]
	if single && fcsFlag == 0 {
		fcsBytes = 1
	}
	window := 1
	if single {
		window = 0
	}
	// the first block's header, whose size grows by 1 MiB: past the end of the file
	blockAt := damaged + 4 + 1 + window + [4]int{0, 1, 2, 4}[descriptor&3] + fcsBytes
	file[blockAt+2] ^= 0x80
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
