package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/stretchr/testify/require"
)

// Cases ported from the original's session-persistence-jsonl tests
// (commit 751fa4c8b6) that the other tests of this package do not
// already cover.

// "rejects a session header with a %s createdAt / %s delegationDepth".
func TestHeaderGuardRejectsBadCounts(t *testing.T) {
	cases := map[string]string{
		"fractional createdAt": `"createdAt":1.5,"delegationDepth":0`,
		"negative createdAt":   `"createdAt":-1,"delegationDepth":0`,
		"unsafe createdAt":     `"createdAt":9007199254740992,"delegationDepth":0`,
		"string depth":         `"createdAt":1,"delegationDepth":"1"`,
		"negative depth":       `"createdAt":1,"delegationDepth":-1`,
		"negative-zero depth":  `"createdAt":1,"delegationDepth":-0`,
	}
	for name, fields := range cases {
		t.Run(name, func(t *testing.T) {
			s := openStore(t)
			line := `{"type":"session","version":0,"id":"bad",` + fields + "}\n"
			path := writeRaw(t, s, Header{ID: "bad"}, line)
			headers, err := s.List(context.Background())
			require.NoError(t, err)
			require.Empty(t, headers, "listing skips it")
			_, err = s.Inspect(context.Background(), "bad")
			require.ErrorIs(t, err, ErrCorrupt)
			require.EqualError(t, err, "corrupt session log: first line is not a session header (raw log: "+path+")")
		})
	}
}

// The scanLog unit cases on where a defect ends the preserved prefix.
func TestPreservedPrefixBoundaries(t *testing.T) {
	const (
		start  = `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}`
		end1   = `{"type":"turn/end","seq":1,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}}}`
		gapped = `{"type":"step/start","seq":9,"time":3,"data":{"turn":2,"step":1}}`
	)
	cases := []struct {
		name      string
		body      string
		preserved int
		loaded    []string // event types after Load
	}{
		{"header only", "", 0, nil},
		{"seq gap without a turn/end", lines(start, `{"type":"step/start","seq":2,"time":2,"data":{"turn":1,"step":1}}`), 1,
			[]string{"turn/start", "turn/end"}},
		{"corrupt line without a turn/end", lines(start, `{not json`), 1, []string{"turn/start", "turn/end"}},
		{"seq gap after the last turn/end", lines(start, end1, gapped), 2, []string{"turn/start", "turn/end"}},
		{"open turn, no turn/end", lines(start), 1, []string{"turn/start", "turn/end"}},
		{"packed row with a mid-run gap after the last turn/end", lines(start, end1,
			`{"type":"text-chunks","seq0":3,"time0":1,"data":{"turn":2,"step":1,"index":0,"dt":[0,0],"texts":["a","b","c"]}}`), 2,
			[]string{"turn/start", "turn/end"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t)
			h := Header{ID: "p", CreatedAt: 1}
			path := writeRaw(t, s, h, headerLineOf(t, h)+c.body)
			log, err := s.Inspect(ctx, "p")
			require.NoError(t, err)
			require.Len(t, log.Events, c.preserved)
			loaded, err := s.Load(ctx, "p")
			require.NoError(t, err)
			var types []string
			for _, e := range loaded.Events {
				types = append(types, e.Type)
			}
			require.Equal(t, c.loaded, types)
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			committed := headerLineOf(t, h)
			if c.preserved > 0 {
				committed += lines(strings.Split(c.body, "\n")[:c.preserved]...)
			}
			require.True(t, strings.HasPrefix(string(raw), committed), "the torn tail is cut at a line boundary")
		})
	}
}

// "list rejects a session header whose id cannot name a storage path".
func TestListRefusesAnEmptyHeaderID(t *testing.T) {
	s := openStore(t)
	path := filepath.Join(s.Root(), "_no-cwd", "invalid-id", logpath.FileName)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(`{"type":"session","version":0,"id":"","createdAt":1,"delegationDepth":0}`+"\n"), 0o600))
	_, err := s.List(context.Background())
	require.ErrorIs(t, err, ErrCorrupt)
	require.EqualError(t, err, `corrupt session log "`+path+`": header id cannot name a storage path`)
}

// "accepts an alternate project path only when it identifies the same
// physical log": a header whose cwd names a project folder that is a
// symlink to the log's real folder still identifies the log.
func TestAProjectFolderSymlinkIdentifiesTheSameLog(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	stored := Header{ID: "physical-alias", CreatedAt: 1, Cwd: "/stored"}
	require.NoError(t, s.Create(ctx, stored, turnEvents(0, 2)))
	realDir, err := logpath.ProjectDir(s.Root(), "/stored")
	require.NoError(t, err)
	aliasDir, err := logpath.ProjectDir(s.Root(), "/alias")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(realDir, aliasDir))
	aliased := stored
	aliased.Cwd = "/alias"
	path := logPathOf(t, s, stored)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	body := string(raw)[strings.IndexByte(string(raw), '\n')+1:]
	require.NoError(t, os.WriteFile(path, []byte(headerLineOf(t, aliased)+body), 0o600))

	reopened, err := OpenJSONL(s.Root())
	require.NoError(t, err)
	defer reopened.Close()
	headers, err := reopened.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []Header{aliased}, headers, "the symlinked folder itself is not listed again")
	log, err := reopened.Load(ctx, "physical-alias")
	require.NoError(t, err)
	require.Equal(t, "/alias", log.Header.Cwd)

	// A cwd naming a folder that does not resolve to the log is refused.
	elsewhere := stored
	elsewhere.Cwd = "/elsewhere"
	require.NoError(t, os.WriteFile(path, []byte(headerLineOf(t, elsewhere)+body), 0o600))
	_, err = reopened.List(ctx)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "and cwd identify")
}

// "resolves a relative custom root before locating a session".
func TestARelativeRootIsResolvedAtOpen(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	s, err := OpenJSONL("sessions")
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, filepath.Join(base, "sessions"), s.Root())
	require.NoError(t, s.Create(context.Background(), header("rel"), turnEvents(0, 1)))
	t.Chdir(t.TempDir())
	_, err = s.Inspect(context.Background(), "rel")
	require.NoError(t, err)
}

// "groups sessions whose cwd paths normalize to the same project
// directory" and "path-traversal session ids are neutralized".
func TestLossyProjectKeysAndTraversalIDs(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a := Header{ID: "../../escape", CreatedAt: 1, Cwd: "/a/b-c"}
	b := Header{ID: "/etc/passwd", CreatedAt: 2, Cwd: "/a-b/c"}
	require.NoError(t, s.Create(ctx, a, turnEvents(0, 1)))
	require.NoError(t, s.Create(ctx, b, turnEvents(0, 1)))
	entries, err := os.ReadDir(s.Root())
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, "--a-b-c--", entries[0].Name())
	for _, h := range []Header{a, b} {
		path := logPathOf(t, s, h)
		require.True(t, strings.HasPrefix(path, filepath.Join(s.Root(), "--a-b-c--")+string(filepath.Separator)), path)
	}
	headers, err := s.List(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []Header{a, b}, headers)
}

// "rejects a mismatched header before repairing either session log".
func TestAMisplacedTornLogIsNeverRepaired(t *testing.T) {
	s := openStore(t)
	h := header("stray")
	path := filepath.Join(s.Root(), "--somewhere-else--", "stray", logpath.FileName)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	content := headerLineOf(t, h) + lines(`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`) + `{"type":"tu`
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	_, err := s.Load(context.Background(), "stray")
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "and cwd identify")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, string(raw))
}
