package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/stretchr/testify/require"
)

// Check names every kind of damage, with the file and its line or frame,
// and writes nothing.
func TestCheckNamesEachDamage(t *testing.T) {
	ctx := context.Background()
	h := header("log")
	turnEnd := `{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}`
	zfile, third := openTurnZstd(t, h)
	second := framesOf(t, zfile)[1]
	duplicateOf := "" // the other log of a duplicated id, which the message must name too
	cases := []struct {
		name    string
		enc     Compression
		arrange func(t *testing.T, s *JSONL) string // returns the damaged path
		kind    string
		line    int // the file's line, the header's being 1
		frameAt int64
		msg     string
	}{
		{"torn tail", CompressionNone, func(t *testing.T, s *JSONL) string {
			return writeRaw(t, s, h, headerLineOf(t, h)+lines(openTurnLines[:3]...)+`{"type":"ste`)
		}, damagedLog, 5, -1, "bytes from byte"},
		{"damage inside the unfinished last turn", CompressionNone, func(t *testing.T, s *JSONL) string {
			return writeRaw(t, s, h, headerLineOf(t, h)+lines(openTurnLines[0], openTurnLines[1], openTurnLines[2], "{bad", openTurnLines[4]))
		}, damagedLog, 5, -1, "a resume cuts them"},
		{"committed damage", CompressionNone, func(t *testing.T, s *JSONL) string {
			return writeRaw(t, s, h, headerLineOf(t, h)+lines(openTurnLines[0], "{bad", turnEnd))
		}, damagedLog, 3, -1, "corrupt session log: unparsable committed event at line 2"},
		{"events that break the surface rules", CompressionNone, func(t *testing.T, s *JSONL) string {
			return writeRaw(t, s, h, headerLineOf(t, h)+lines(openTurnLines[0],
				`{"type":"user/message","seq":1,"time":2,"data":{"content":[],"source":{"kind":"user"},"role":"user","id":"m"}}`))
		}, damagedLog, 0, -1, `invalid seed event at index 1: session event "user/message" is surface-eligible and requires a surfaceOp marker`},
		{"unreadable header", CompressionNone, func(t *testing.T, s *JSONL) string {
			return writeRaw(t, s, h, "{not a header\n"+lines(openTurnLines...))
		}, unreadableHeader, 0, -1, "corrupt session log: header line is not valid JSON"},
		{"header of another shape", CompressionNone, func(t *testing.T, s *JSONL) string {
			return writeRaw(t, s, h, `{"type":"session","version":0,"id":"log"}`+"\n")
		}, unreadableHeader, 0, -1, "corrupt session log: first line is not a session header"},
		{"corrupt complete frame", CompressionZstd, func(t *testing.T, s *JSONL) string {
			f := append([]byte(nil), zfile...)
			f[second.end-1] ^= 0xFF
			return writeZstd(t, s, h, f)
		}, damagedLog, 0, int64(second.start), "failed validation"},
		{"torn final frame", CompressionZstd, func(t *testing.T, s *JSONL) string {
			return writeZstd(t, s, h, zfile[:third.start+7])
		}, damagedLog, 4, int64(third.start), "a resume cuts them"},
		{"leftover temporary file", CompressionNone, func(t *testing.T, s *JSONL) string {
			writeRaw(t, s, h, headerLineOf(t, h))
			path := logPathOf(t, s, h) + ".0123456789ab.tmp"
			require.NoError(t, os.WriteFile(path, []byte("partial"), 0o600))
			return path
		}, tempFile, 0, -1, "leftover temporary file"},
		{"empty session folder", CompressionNone, func(t *testing.T, s *JSONL) string {
			dir := filepath.Dir(logPathOf(t, s, h))
			require.NoError(t, os.MkdirAll(dir, 0o700))
			return dir
		}, emptyFolder, 0, -1, "empty session folder"},
		{"log of the other encoding", CompressionNone, func(t *testing.T, s *JSONL) string {
			writeRaw(t, s, header("a"), headerLineOf(t, header("a")))
			return writeZstd(t, s, h, zfile)
		}, badLayout, 0, -1, `uses .jsonl.zstd, but this backend is configured for compression "none"`},
		{"flat layout", CompressionNone, func(t *testing.T, s *JSONL) string {
			path := filepath.Join(s.Root(), "--work-project--", "flat.jsonl")
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte(headerLineOf(t, h)), 0o600))
			return path
		}, badLayout, 0, -1, "flat-file layout"},
		{"misplaced log", CompressionNone, func(t *testing.T, s *JSONL) string {
			path := filepath.Join(s.Root(), "--elsewhere--", "log", logpath.FileName)
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte(headerLineOf(t, h)), 0o600))
			return path
		}, damagedLog, 0, -1, `header id "log" and cwd identify`},
		{"header with a retired policy key", CompressionNone, func(t *testing.T, s *JSONL) string {
			return writeRaw(t, s, h, `{"type":"session","version":0,"id":"log","createdAt":1,"cwd":"/work/project",`+
				`"delegationDepth":0,"sandboxMode":"x"}`+"\n")
		}, unreadableHeader, 0, -1, "session header uses retired policy baseline fields"},
		{"one id in two project folders", CompressionNone, func(t *testing.T, s *JSONL) string {
			// --work-project-- comes after --another--: the second log seen is the one reported.
			first := writeRaw(t, s, Header{ID: "log", CreatedAt: 1, Cwd: "/another"}, headerLineOf(t, Header{ID: "log", CreatedAt: 1, Cwd: "/another"}))
			second := writeRaw(t, s, h, headerLineOf(t, h))
			require.Less(t, first, second)
			duplicateOf = first
			return second
		}, damagedLog, 0, -1, `duplicate JSONL session id "log" appears in multiple project directories`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			path := c.arrange(t, s)
			before := snapshotTree(t, s.Root())
			got, err := s.check(ctx)
			require.NoError(t, err)
			require.Len(t, got, 1, "%v", got)
			d := got[0]
			require.Equal(t, c.kind, d.Kind)
			require.Equal(t, path, d.Path)
			require.Equal(t, c.line, d.Line)
			require.Equal(t, c.frameAt, d.FrameAt)
			require.Contains(t, d.Msg, c.msg)
			require.Contains(t, d.Msg, path, "the message names the file")
			if duplicateOf != "" {
				require.Contains(t, d.Msg, duplicateOf, "the message names the other file")
				duplicateOf = ""
			}
			require.Equal(t, before, snapshotTree(t, s.Root()), "check writes nothing")
		})
	}
}

func TestCheckOfAHealthyStoreFindsNothing(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []Compression{CompressionNone, CompressionZstd} {
		s := openStore(t, WithCompression(enc))
		require.NoError(t, s.Create(ctx, header("a"), turnEvents(0, 3)))
		require.NoError(t, s.Append(ctx, "a", turnEvents(3, 2)))
		require.NoError(t, s.Create(ctx, Header{ID: "b", CreatedAt: 2}, nil))
		got, err := s.check(ctx)
		require.NoError(t, err)
		require.Empty(t, got, enc.String())
	}
	got, err := openStore(t).check(ctx)
	require.NoError(t, err)
	require.Empty(t, got, "a missing root holds no damage")
}

// snapshotTree maps every path under root to its content and mode.
func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		content := ""
		if !info.IsDir() {
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			content = string(raw)
		}
		out[path] = info.Mode().String() + info.ModTime().String() + content
		return nil
	}))
	return out
}
