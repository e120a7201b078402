package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListAcrossProjectsSkippingNonHeaders(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a, b := header("a"), Header{ID: "b", CreatedAt: 2}
	require.NoError(t, s.Create(ctx, a, nil))
	require.NoError(t, s.Create(ctx, b, nil))
	withExtra := Header{ID: "c", CreatedAt: 3, Cwd: "/other"}
	writeRaw(t, s, withExtra, `{"type":"session","version":0,"id":"c","createdAt":3,"cwd":"/other","delegationDepth":0,"future":{"x":1}}`+"\n")
	foreign := Header{ID: "v7", CreatedAt: 4}
	writeRaw(t, s, foreign, `{"type":"session","version":7,"id":"v7","createdAt":4,"delegationDepth":0}`+"\n")
	writeRaw(t, s, Header{ID: "junk"}, "not a header\n")
	writeRaw(t, s, Header{ID: "empty"}, "")
	writeRaw(t, s, Header{ID: "torn"}, `{"type":"session","version":0,"id":"torn","createdAt":1,"delegationDepth":0}`)
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(logPathOf(t, s, a)), "notes.txt"), []byte("x"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(s.Root(), "_no-cwd", "no-log-here"), 0o700))

	headers, err := s.List(ctx)
	require.NoError(t, err)
	foreign.Version = 7
	require.ElementsMatch(t, []Header{a, b, withExtra, foreign}, headers)

	_, err = s.Inspect(ctx, "v7")
	require.ErrorIs(t, err, errUnsupported, "listing is lenient, inspect is strict")
}

func TestListOfMissingRootIsEmpty(t *testing.T) {
	s, err := OpenJSONL(filepath.Join(t.TempDir(), "absent"))
	require.NoError(t, err)
	defer s.Close()
	headers, err := s.List(context.Background())
	require.NoError(t, err)
	require.Empty(t, headers)
	_, err = s.Inspect(context.Background(), "x")
	require.ErrorIs(t, err, ErrNotFound)
	require.EqualError(t, err, `session "x" not found`)
}

func TestOpenRefusesRootThatIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := OpenJSONL(file)
	require.Error(t, err)
}

func TestListAndLookupRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		arrange func(t *testing.T, s *JSONL) string // returns the offending path
		lookup  string                              // id whose Inspect must fail too ("" = none)
		kind    error
		msg     string
	}{
		{"flat layout", func(t *testing.T, s *JSONL) string {
			path := filepath.Join(s.Root(), "--work-project--", "flat.jsonl")
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o600))
			return path
		}, "flat", errUnsupported, `session artifact "%s" uses the unsupported flat-file layout; ` +
			`a log must live at <project>/<encoded id>/session.jsonl`},
		{"root mixing encodings", func(t *testing.T, s *JSONL) string {
			require.NoError(t, s.Create(ctx, header("plain"), nil))
			path := filepath.Join(s.Root(), "--work-project--", "z", "session.jsonl.zstd")
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte{0x28, 0xb5, 0x2f, 0xfd}, 0o600))
			return path
		}, "z", errUnsupported, `session artifact "%s" uses .jsonl.zstd, but this backend is configured for ` +
			`compression "none"; use a separate root or select the matching compression mode`},
		{"duplicate id", func(t *testing.T, s *JSONL) string {
			require.NoError(t, s.Create(ctx, header("twice"), nil))
			other := Header{ID: "twice", CreatedAt: 1, Cwd: "/other"}
			writeRaw(t, s, other, headerLineOf(t, other))
			return ""
		}, "twice", ErrCorrupt, `duplicate JSONL session id "twice" appears in multiple project directories`},
		{"wrong project folder", func(t *testing.T, s *JSONL) string {
			h := header("moved")
			path := filepath.Join(s.Root(), "--somewhere-else--", "moved", "session.jsonl")
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte(headerLineOf(t, h)), 0o600))
			return path
		}, "moved", ErrCorrupt, `corrupt session log "%s": header id "moved" and cwd identify "` +
			`ROOT/--work-project--/moved/session.jsonl"`},
		{"header id does not match folder", func(t *testing.T, s *JSONL) string {
			path := filepath.Join(s.Root(), "--work-project--", "folder", "session.jsonl")
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			require.NoError(t, os.WriteFile(path, []byte(headerLineOf(t, header("inner"))), 0o600))
			return path
		}, "", ErrCorrupt, `corrupt session log "%s": header id "inner" and cwd identify "` +
			`ROOT/--work-project--/inner/session.jsonl"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			path := c.arrange(t, s)
			want := strings.NewReplacer("%s", path, "ROOT", s.Root()).Replace(c.msg)
			_, err := s.List(ctx)
			require.ErrorIs(t, err, c.kind)
			require.EqualError(t, err, want)
			if c.lookup != "" {
				_, err = s.Inspect(ctx, c.lookup)
				require.ErrorIs(t, err, c.kind)
			}
		})
	}
}

func TestInspectRequestedIDMustMatchHeader(t *testing.T) {
	s := openStore(t)
	// A header copied into another session's folder must not answer for it.
	path := filepath.Join(s.Root(), "_no-cwd", "asked", "session.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(headerLineOf(t, Header{ID: "stored"})), 0o600))
	_, err := s.Inspect(context.Background(), "asked")
	require.ErrorIs(t, err, ErrCorrupt)
	require.EqualError(t, err, `corrupt session log "`+path+`": requested id "asked" does not match header id "stored"`)
}

func TestListReadsHeaderLongerThanOneBuffer(t *testing.T) {
	s := openStore(t)
	long := Header{ID: "long", CreatedAt: 1, AgentPreset: strings.Repeat("p", 10_000)}
	short := Header{ID: "short", CreatedAt: 2}
	require.NoError(t, s.Create(context.Background(), long, turnEvents(0, 3)))
	require.NoError(t, s.Create(context.Background(), short, nil))
	headers, err := s.List(context.Background())
	require.NoError(t, err)
	require.ElementsMatch(t, []Header{long, short}, headers)
}

// TestListLogsIsListWithEachLogInspected: ListLogs hands, in one pass,
// each header List returns with what Inspect of it returns, a log that
// lists but does not inspect included, in both encodings.
func TestListLogsIsListWithEachLogInspected(t *testing.T) {
	for _, enc := range []Compression{CompressionNone, CompressionZstd} {
		t.Run(enc.String(), func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, WithCompression(enc))
			require.NoError(t, s.Create(ctx, header("a"), turnEvents(0, 3)))
			require.NoError(t, s.Create(ctx, Header{ID: "b", CreatedAt: 2, Cwd: "/other"}, nil))
			if enc == CompressionNone {
				writeRaw(t, s, Header{ID: "v7", CreatedAt: 4}, `{"type":"session","version":7,"id":"v7","createdAt":4,"delegationDepth":0}`+"\n")
				writeRaw(t, s, Header{ID: "junk"}, "not a header\n")
			}
			headers, err := s.List(ctx)
			require.NoError(t, err)
			var listed []Header
			require.NoError(t, s.ListLogs(ctx, func(h Header, log *Log, err error) error {
				listed = append(listed, h)
				want, wantErr := s.Inspect(ctx, h.ID)
				require.Equal(t, want, log, h.ID)
				require.Equal(t, wantErr, err, h.ID)
				return nil
			}))
			require.Equal(t, headers, listed)
			stop := errors.New("stop")
			require.ErrorIs(t, s.ListLogs(ctx, func(Header, *Log, error) error { return stop }), stop)
		})
	}
}
