package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

func openZstdStore(t *testing.T) *JSONL {
	t.Helper()
	return openStore(t, WithCompression(CompressionZstd))
}

// zstdFile compresses each plaintext as its own checksummed frame.
func zstdFile(plaintexts ...string) []byte {
	var out []byte
	for _, p := range plaintexts {
		out = appendFrame(out, []byte(p))
	}
	return out
}

// writeZstd stores content as the Zstandard log of h.
func writeZstd(t *testing.T, s *JSONL, h Header, content []byte) string {
	t.Helper()
	path := filepath.Join(filepath.Dir(logPathOf(t, s, h)), zstdLogFileName)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, content, 0o600))
	return path
}

// framesOf splits a file into its frames, failing on any torn frame.
func framesOf(t *testing.T, raw []byte) []frameRange {
	t.Helper()
	scan, err := scanFrames(raw, 0, "")
	require.NoError(t, err)
	require.Equal(t, -1, scan.torn)
	return scan.frames
}

// plaintextOf decodes every frame with klauspost's stream decoder, which
// verifies each checksum.
func plaintextOf(t *testing.T, raw []byte) string {
	t.Helper()
	dec, err := zstd.NewReader(bytes.NewReader(raw), zstd.WithDecoderConcurrency(1))
	require.NoError(t, err)
	defer dec.Close()
	out, err := io.ReadAll(dec)
	require.NoError(t, err)
	return string(out)
}

// The original's own fixture, compressed by the zstd tool as the original
// writes its logs (a header frame, then one checksummed frame per batch),
// is listed, inspected, loaded and appended to; the raw fixture is the
// oracle of every read.
func TestOriginalZstdFixtureRoundTrip(t *testing.T) {
	ctx := context.Background()
	compressed, err := os.ReadFile(filepath.Join("testdata", "original", "session-sandbox-root.jsonl.zstd"))
	require.NoError(t, err)
	plain, err := os.ReadFile(filepath.Join("testdata", "original", "session-sandbox-root.jsonl"))
	require.NoError(t, err)
	const id = "00000000-0000-0000-0000-000000000000"
	h := Header{ID: id, Cwd: "/Users/cty/acp-snap-cwd-MABAjO"}

	raw := openStore(t)
	writeRaw(t, raw, h, string(plain))
	want, err := raw.Inspect(ctx, id)
	require.NoError(t, err)

	s := openStore(t) // no WithCompression: the root's log decides
	path := writeZstd(t, s, h, compressed)
	headers, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []Header{want.Header}, headers)
	enc, err := s.Compression()
	require.NoError(t, err)
	require.Equal(t, CompressionZstd, enc)
	got, err := s.Inspect(ctx, id)
	require.NoError(t, err)
	require.Equal(t, want, got)
	loaded, err := s.Load(ctx, id)
	require.NoError(t, err)
	require.Equal(t, want.Events, loaded.Events, "a balanced log needs no repair")

	next := int64(len(want.Events))
	require.NoError(t, s.Append(ctx, id, turnEvents(next, 3)))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(after, compressed), "the original's frames are never rewritten")
	require.Len(t, framesOf(t, after), len(framesOf(t, compressed))+1, "one append is one frame")
	var appended []byte
	for _, e := range turnEvents(next, 3) {
		appended = append(appendEvent(appended, e, false), '\n')
	}
	require.Equal(t, string(plain)+string(appended), plaintextOf(t, after))
}

// A Zstandard store writes the original's frame discipline: the header
// alone in frame 1, the seed in frame 2, one checksummed frame per durable
// batch, and plaintext byte-identical to the uncompressed store's file.
func TestZstdWriterFrameDiscipline(t *testing.T) {
	ctx := context.Background()
	z, raw := openZstdStore(t), openStore(t)
	h := header("frames")
	for _, s := range []*JSONL{z, raw} {
		require.NoError(t, s.Create(ctx, h, turnEvents(0, 2)))
		require.NoError(t, s.Append(ctx, h.ID, turnEvents(2, 1)))
		require.NoError(t, s.Append(ctx, h.ID, turnEvents(3, 4)))
	}
	zpath := filepath.Join(filepath.Dir(logPathOf(t, z, h)), zstdLogFileName)
	compressed, err := os.ReadFile(zpath)
	require.NoError(t, err)
	_, err = os.Stat(logPathOf(t, z, h))
	require.ErrorIs(t, err, os.ErrNotExist, "a Zstandard store writes no session.jsonl")
	plain, err := os.ReadFile(logPathOf(t, raw, h))
	require.NoError(t, err)
	require.Equal(t, string(plain), plaintextOf(t, compressed))

	frames := framesOf(t, compressed)
	require.Len(t, frames, 4, "header, seed, then one frame per append")
	for _, f := range frames {
		require.NotZero(t, compressed[f.start+4]&0x04, "every frame carries the content checksum")
	}
	first, err := sharedDecoder.DecodeAll(compressed[frames[0].start:frames[0].end], nil)
	require.NoError(t, err)
	require.Equal(t, headerLineOf(t, h), string(first))

	log, err := z.Load(ctx, h.ID)
	require.NoError(t, err)
	require.Len(t, log.Events, 7)
	headers, err := z.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []Header{h}, headers)
}

// openTurnZstd is a Zstandard log whose last frame holds an open turn:
// frame 1 the header, frame 2 a completed turn, frame 3 the open turn.
func openTurnZstd(t *testing.T, h Header) (file []byte, third frameRange) {
	t.Helper()
	file = zstdFile(headerLineOf(t, h), lines(openTurnLines[:2]...), lines(openTurnLines[2:]...))
	frames := framesOf(t, file)
	require.Len(t, frames, 3)
	return file, frames[2]
}

// A torn final frame is cut at every byte offset: Inspect returns the
// complete frames' events (plus the torn frame's lines when only its
// checksum is missing) and writes nothing; Load cuts the torn frame, keeps
// its bytes in session.jsonl.zstd.broken, re-encodes what it still held as
// a fresh frame with the closers, and never rewrites an earlier byte.
func TestZstdTornFinalFrameAtEveryOffset(t *testing.T) {
	ctx := context.Background()
	h := header("torn")
	file, third := openTurnZstd(t, h)
	shape, err := parseFrame(file, third.start, "")
	require.NoError(t, err)
	require.Equal(t, third.end-4, shape.blocksEnd, "the open turn's frame is one block and a checksum")
	for cut := third.start + 1; cut < third.end; cut++ {
		s := openZstdStore(t)
		path := writeZstd(t, s, h, file[:cut])
		recovered := cut >= shape.blocksEnd
		kept := openTurnLines[:2]
		if recovered {
			kept = openTurnLines
		}

		got, err := s.Inspect(ctx, h.ID)
		require.NoError(t, err, "cut %d", cut)
		require.Len(t, got.Events, len(kept), "cut %d", cut)
		onDisk, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, file[:cut], onDisk, "Inspect never writes (cut %d)", cut)

		loaded, err := s.Load(ctx, h.ID)
		require.NoError(t, err, "cut %d", cut)
		onDisk, err = os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, file[:third.start], onDisk[:third.start], "earlier frames untouched (cut %d)", cut)
		want, frames := lines(kept...), 2 // turn 1 is closed: nothing to add
		if recovered {
			want, frames = want+lines(openTurnClosers...), 3
		}
		require.Len(t, framesOf(t, onDisk), frames, "cut %d", cut)
		require.Equal(t, headerLineOf(t, h)+want, plaintextOf(t, onDisk), "cut %d", cut)
		require.Len(t, loaded.Events, strings.Count(want, "\n"), "cut %d", cut)

		broken, err := os.ReadFile(path + ".broken")
		require.NoError(t, err)
		require.Equal(t, file[third.start:cut], broken, "the cut bytes are kept (cut %d)", cut)
		require.NoError(t, s.Append(ctx, h.ID, turnEvents(int64(len(loaded.Events)), 1)), "cut %d", cut)
	}
}

// A cut inside the header frame leaves no complete frame: every read
// fails, and listing skips the log.
func TestZstdTornHeaderFrame(t *testing.T) {
	ctx := context.Background()
	h := header("headless")
	file, _ := openTurnZstd(t, h)
	first := framesOf(t, file)[0]
	for cut := 0; cut < first.end; cut++ {
		s := openZstdStore(t)
		writeZstd(t, s, h, file[:cut])
		headers, err := s.List(ctx)
		require.NoError(t, err, "cut %d", cut)
		require.Empty(t, headers, "cut %d", cut)
		_, err = s.Inspect(ctx, h.ID)
		require.ErrorIs(t, err, ErrCorrupt, "cut %d", cut)
		require.ErrorContains(t, err, "empty or header-less Zstandard session log", "cut %d", cut)
	}
}

// A frame torn in its middle block keeps the complete blocks before it.
func TestZstdTornMultiBlockFrameKeepsCompleteBlocks(t *testing.T) {
	ctx := context.Background()
	h := header("blocks")
	var body []string
	for i := range 300 {
		body = append(body, fmt.Sprintf(`{"type":"todo/write","seq":%d,"time":1,"data":{"r":"%s"}}`, i, randomHex(t, 400)))
	}
	file := zstdFile(headerLineOf(t, h), lines(body...))
	frames := framesOf(t, file)
	shape, err := parseFrame(file, frames[1].start, "")
	require.NoError(t, err)
	cut := shape.lastHeader + 10 // inside the last block
	s := openZstdStore(t)
	writeZstd(t, s, h, file[:cut])
	got, err := s.Inspect(ctx, h.ID)
	require.NoError(t, err)
	require.NotEmpty(t, got.Events, "the complete blocks are recovered")
	require.Less(t, len(got.Events), len(body))
	for i, e := range got.Events {
		require.Equal(t, int64(i), e.Seq)
	}
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n/2)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return fmt.Sprintf("%x", b)
}

// Damage in a complete frame is fatal and names the file and the frame.
func TestZstdCompleteFrameDamage(t *testing.T) {
	ctx := context.Background()
	h := header("damaged")
	good, third := openTurnZstd(t, h)
	second := framesOf(t, good)[1]
	cases := []struct {
		name    string
		file    func() []byte
		frameAt int
		msg     string
	}{
		{"checksum mismatch", func() []byte {
			f := bytes.Clone(good)
			f[second.end-1] ^= 0xFF
			return f
		}, second.start, fmt.Sprintf("corrupt Zstandard session log: frame at byte %d failed validation", second.start)},
		{"bad magic", func() []byte {
			f := bytes.Clone(good)
			f[third.start] ^= 0xFF
			return f
		}, third.start, fmt.Sprintf("corrupt Zstandard session log: invalid frame magic at byte %d", third.start)},
		{"skippable frame", func() []byte {
			skip := binary.LittleEndian.AppendUint32(nil, 0x184D2A50)
			skip = binary.LittleEndian.AppendUint32(skip, 0)
			return append(bytes.Clone(good[:third.start]), append(skip, good[third.start:]...)...)
		}, third.start, fmt.Sprintf("corrupt Zstandard session log: invalid frame magic at byte %d", third.start)},
		{"reserved frame-header bit", func() []byte {
			f := bytes.Clone(good)
			f[third.start+4] |= 0x08
			return f
		}, third.start, fmt.Sprintf("corrupt Zstandard session log: reserved frame-header bit at byte %d", third.start+4)},
		{"reserved block type", func() []byte {
			f := bytes.Clone(good)
			at := third.start + 4 + 1 + frameHeaderRest(f[third.start+4])
			f[at] |= 0x06
			return f
		}, third.start, "corrupt Zstandard session log: reserved block type at byte"},
		{"record without its LF", func() []byte {
			return zstdFile(headerLineOf(t, h), strings.TrimSuffix(lines(openTurnLines[:2]...), "\n"), lines(openTurnLines[2:]...))
		}, second.start, "corrupt Zstandard session log: complete frame contains a torn JSONL record"},
		{"bad line before the end", func() []byte {
			return zstdFile(headerLineOf(t, h), lines(openTurnLines[0], "not json"), lines(openTurnLines[2:]...))
		}, second.start, "corrupt Zstandard session log: complete frame contains a torn JSONL record"},
		{"seq gap", func() []byte {
			return zstdFile(headerLineOf(t, h), lines(openTurnLines[0]), lines(openTurnLines[2:]...))
		}, len(zstdFile(headerLineOf(t, h), lines(openTurnLines[0]))), "corrupt Zstandard session log: complete frame contains a torn JSONL record"},
		{"header frame with two lines", func() []byte {
			return zstdFile(headerLineOf(t, h)+lines(openTurnLines[0]), lines(openTurnLines[1]))
		}, 0, "corrupt Zstandard session log: first frame is not exactly one header line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openZstdStore(t)
			file := c.file()
			path := writeZstd(t, s, h, file)
			for _, read := range []func(context.Context, string) (*Log, error){s.Inspect, s.Load} {
				_, err := read(ctx, h.ID)
				var ce *corruptError
				require.ErrorAs(t, err, &ce)
				require.Contains(t, ce.Msg, c.msg)
				require.Contains(t, ce.Msg, path, "the error names the file")
				require.Equal(t, path, ce.Path)
				require.Equal(t, int64(c.frameAt), ce.FrameAt, "the error names the frame")
			}
			onDisk, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, file, onDisk, "a fatal read repairs nothing")
		})
	}
}

// Listing reads only the header frame: an incomplete or non-header first
// frame is skipped, one that fails validation lists the header its blocks
// still hold (reading the log then fails), one that holds two lines fails
// the listing.
func TestZstdListingHeaderFrame(t *testing.T) {
	ctx := context.Background()
	h := header("listed")
	good := zstdFile(headerLineOf(t, h), "garbage that is never read")
	bad := bytes.Clone(good)
	first := framesOf(t, zstdFile(headerLineOf(t, h)))[0]
	bad[first.end-1] ^= 0xFF
	cases := []struct {
		name string
		file []byte
		want []Header
		err  string
	}{
		{"valid", good, []Header{h}, ""},
		{"incomplete first frame", good[:first.end-1], nil, ""},
		{"not a header", zstdFile(`{"type":"feedback/record"}` + "\n"), nil, ""},
		{"failed checksum", bad, []Header{h}, ""},
		{"not a frame", []byte("{\"type\":\"session\"}\n"), nil, ""},
		{"two lines", zstdFile(headerLineOf(t, h) + "{}\n"), nil, "corrupt Zstandard session log: first frame is not exactly one header line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openZstdStore(t)
			writeZstd(t, s, h, c.file)
			got, err := s.List(ctx)
			if c.name == "failed checksum" {
				_, err := s.Inspect(ctx, h.ID)
				require.ErrorContains(t, err, "failed validation", "reading the damaged log names the damage")
			}
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

// A root holds one encoding: a store fixed to one refuses a root holding
// the other, in both directions, with the original's message, and an
// unfixed store refuses a root holding both.
func TestRootMixingEncodingsIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		existing Compression
		fixed    []Option
		stray    string
		want     string
	}{
		{"zstd store over a plain root", CompressionNone, []Option{WithCompression(CompressionZstd)}, logpath.FileName,
			`uses .jsonl, but this backend is configured for compression "zstd"`},
		{"plain store over a zstd root", CompressionZstd, []Option{WithCompression(CompressionNone)}, zstdLogFileName,
			`uses .jsonl.zstd, but this backend is configured for compression "none"`},
		{"unfixed store over both", CompressionNone, nil, zstdLogFileName,
			`uses .jsonl.zstd, but this backend is configured for compression "none"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			writer := openStore(t, WithCompression(c.existing))
			require.NoError(t, writer.Create(ctx, header("a"), turnEvents(0, 1)))
			if c.fixed == nil {
				other := openStore(t, WithCompression(c.existing.other()))
				require.NoError(t, other.Create(ctx, header("b"), nil))
				src := filepath.Join(other.Root(), "--work-project--", "b")
				require.NoError(t, os.Rename(src, filepath.Join(writer.Root(), "--work-project--", "b")))
			}
			s, err := OpenJSONL(writer.Root(), c.fixed...)
			require.NoError(t, err)
			defer s.Close()
			stray := filepath.Join(writer.Root(), "--work-project--", "a", c.stray)
			if c.fixed == nil {
				stray = filepath.Join(writer.Root(), "--work-project--", "b", c.stray)
			}
			want := `session artifact "` + stray + `" ` + c.want + `; use a separate root or select the matching compression mode`
			_, err = s.List(ctx)
			require.ErrorIs(t, err, errUnsupported)
			require.EqualError(t, err, want)
			_, err = s.Inspect(ctx, "a")
			require.EqualError(t, err, want)
			err = s.Create(ctx, header("c"), nil)
			require.EqualError(t, err, want, "the verdict is kept for every operation")
		})
	}
}

// A Zstandard store used first inside a testing/synctest bubble still
// works outside it (the shared codec's pools belong to no bubble).
func TestZstdCodecOutlivesASynctestBubble(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		s, err := OpenJSONL(root, WithCompression(CompressionZstd))
		require.NoError(t, err)
		require.NoError(t, s.Create(ctx, header("bubble"), turnEvents(0, 2)))
		_, err = s.Inspect(ctx, "bubble")
		require.NoError(t, err)
		require.NoError(t, s.Close())
	})
	s, err := OpenJSONL(root)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Append(ctx, "bubble", turnEvents(2, 1)))
	log, err := s.Inspect(ctx, "bubble")
	require.NoError(t, err)
	require.Len(t, log.Events, 3)
}

// fiveFrameZstd is a Zstandard log of five frames: the header, then four
// completed turns of five events, each in its own frame.
func fiveFrameZstd(t *testing.T, h Header) ([]byte, []frameRange) {
	t.Helper()
	s := openZstdStore(t)
	ctx := context.Background()
	require.NoError(t, s.Create(ctx, h, nil))
	for turn := range 4 {
		require.NoError(t, s.Append(ctx, h.ID, turnEvents(int64(turn*5), 5)))
	}
	file, err := os.ReadFile(filepath.Join(filepath.Dir(logPathOf(t, s, h)), zstdLogFileName))
	require.NoError(t, err)
	frames := framesOf(t, file)
	require.Len(t, frames, 5)
	return file, frames
}

// Damage that makes a frame before the last one run past the end of the
// file (a block size grown by one flipped bit) is damage in the middle of
// the log, not a torn tail: every read refuses it naming the file and the
// frame, and nothing is cut or rewritten.
func TestZstdDamageBeforeTheLastFrameIsNotATornTail(t *testing.T) {
	ctx := context.Background()
	h := header("midframe")
	good, frames := fiveFrameZstd(t, h)
	third := frames[2]
	blockAt := third.start + 4 + 1 + frameHeaderRest(good[third.start+4])
	bad := bytes.Clone(good)
	bad[blockAt+1] ^= 0x40 // block size += 2,048: past the end of the file
	shape, err := parseFrame(bad, third.start, "")
	require.NoError(t, err)
	require.False(t, shape.complete, "the damaged frame now looks torn")

	s := openZstdStore(t)
	path := writeZstd(t, s, h, bad)
	for name, read := range map[string]func(context.Context, string) (*Log, error){"Inspect": s.Inspect, "Load": s.Load} {
		_, err := read(ctx, h.ID)
		var ce *corruptError
		require.ErrorAs(t, err, &ce, name)
		require.Equal(t, path, ce.Path, name)
		require.Equal(t, int64(third.start), ce.FrameAt, "%s names the damaged frame", name)
		require.Contains(t, ce.Msg, fmt.Sprintf("frame at byte %d", third.start), name)
		require.Contains(t, ce.Msg, path, name)
	}
	require.Error(t, s.Append(ctx, h.ID, turnEvents(20, 1)), "an append adopting the log refuses it too")
	onDisk, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, bad, onDisk, "nothing is repaired away")
	_, err = os.Stat(path + ".broken")
	require.ErrorIs(t, err, os.ErrNotExist, "no completed turn is moved to .broken")

	// The same damage in the final frame is still a torn tail.
	last := frames[4]
	tail := bytes.Clone(good)
	tail[last.start+4+1+frameHeaderRest(good[last.start+4])+1] ^= 0x40
	s = openZstdStore(t)
	writeZstd(t, s, h, tail)
	got, err := s.Inspect(ctx, h.ID)
	require.NoError(t, err)
	require.Len(t, got.Events, 15)
}

// A batch of at most rawFrameMax bytes is stored as one raw block, in the
// bytes the encoder writes whenever it stores such a batch raw itself;
// whatever its content, the frame is complete to the structural split and
// decodes, checksum verified, to the batch.
func TestAShortBatchIsAChecksummedRawFrame(t *testing.T) {
	line := []byte(`{"seq":3,"time":1764522000000,"type":"turn/end","data":{"turn":1,"reason":{"kind":"aborted"}}}` + "\n")
	require.Equal(t, sharedEncoder.EncodeAll(line, nil), appendFrame(nil, line), "the encoder stores this line raw too")
	random := make([]byte, rawFrameMax)
	_, _ = rand.Read(random)
	repeated := bytes.Repeat([]byte("a"), rawFrameMax)
	for n := 1; n <= rawFrameMax; n++ {
		for _, plain := range [][]byte{random[:n], repeated[:n], line[:min(n, len(line))]} {
			frame := appendFrame([]byte("x"), plain)[1:]
			require.Len(t, frame, len(plain)+13, "magic, descriptor, window, block header, checksum")
			require.Equal(t, []frameRange{{0, len(frame)}}, framesOf(t, frame))
			require.Equal(t, string(plain), plaintextOf(t, frame))
			if encoded := sharedEncoder.EncodeAll(plain, nil); len(encoded) == len(frame) {
				require.Equal(t, encoded, frame, "stored raw by the encoder as well: the same bytes")
			}
		}
	}
	frame := appendFrame(nil, append(line, line...))
	require.Equal(t, sharedEncoder.EncodeAll(append(line, line...), nil), frame, "a longer batch is the encoder's")
	require.Less(t, len(frame), 2*len(line), "and compressed")
	bad := appendFrame(nil, line)
	bad[len(bad)-1] ^= 1
	_, err := sharedDecoder.DecodeAll(bad, nil)
	require.Error(t, err, "the checksum is checked")
}
