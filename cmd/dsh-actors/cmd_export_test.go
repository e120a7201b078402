package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/stretchr/testify/require"
)

// import, then list from the Postgres store as from the folder, then
// export: the exported folder holds the imported files byte for byte.
func TestImportListExportThroughTheCLI(t *testing.T) {
	src := t.TempDir()
	_, err := storegen.Generate(src, storegen.Shape{Sessions: 12, Children: 3, Turns: 1})
	require.NoError(t, err)
	dsn := cluster.Database(t)

	code, out, errOut := run(t, "import", "--from", src, "--store", dsn)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "imported 12 sessions from "+src+"\n", out)

	code, fromFolder, errOut := run(t, "list", "--json", "--no-index", "--store", src, storegen.Parent)
	require.Equal(t, 0, code, errOut)
	code, fromPostgres, errOut := run(t, "list", "--json", "--store", dsn, storegen.Parent)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, fromFolder, fromPostgres)
	require.Contains(t, fromPostgres, storegen.ChildID(2))

	dst := filepath.Join(t.TempDir(), "out")
	code, out, errOut = run(t, "export", "--store", dsn, "--to", dst)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "exported 12 sessions to "+dst+"\n", out)
	require.Equal(t, storetest.Files(t, src), storetest.Files(t, dst))

	code, out, errOut = run(t, "import", "--from", src, "--store", dsn)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "imported 0 sessions from "+src+" (12 stored already)\n", out, "a second import only adds what is missing")
}

// import skips a damaged log, naming it, imports every other one, and
// exits 1; once the log is repaired, running it again imports only that
// one. A --from folder that does not exist is named as --from.
func TestImportSkipsDamagedLogsAndResumes(t *testing.T) {
	src := t.TempDir()
	_, err := storegen.Generate(src, storegen.Shape{Sessions: 12, Children: 3, Turns: 2})
	require.NoError(t, err)
	damaged, err := logpath.Path(src, "/work/alpha", storegen.ChildID(1))
	require.NoError(t, err)
	whole, err := os.ReadFile(damaged)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(whole), "\n")
	lines[3] = "{not json\n"
	require.NoError(t, os.WriteFile(damaged, []byte(strings.Join(lines, "")), 0o600))
	dsn := cluster.Database(t)

	code, out, errOut := run(t, "import", "--from", src, "--store", dsn)
	require.Equal(t, 1, code)
	require.Equal(t, "imported 11 sessions from "+src+" (1 damaged log skipped)\n", out)
	require.Contains(t, errOut, "dsh-actors import: skipped "+storegen.ChildID(1)+": ")
	require.Contains(t, errOut, damaged)

	require.NoError(t, os.WriteFile(damaged, whole, 0o600))
	code, out, errOut = run(t, "import", "--from", src, "--store", dsn)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "imported 1 sessions from "+src+" (11 stored already)\n", out)

	missing := filepath.Join(t.TempDir(), "nonexistent")
	code, _, errOut = run(t, "import", "--from", missing, "--store", dsn)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "--from")
	require.NotContains(t, errOut, "--store names")
}

func TestExportAndImportNameWhatIsMissing(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "--to", "x"}, "--store must name a Postgres store"},
		{[]string{"export", "--store", "/some/folder", "--to", "x"}, "--store must name a Postgres store"},
		{[]string{"export", "--store", "postgres://h/db"}, "--to names the JSONL store folder and is required"},
		{[]string{"import", "--store", "postgres://h/db"}, "--from names the JSONL store folder and is required"},
		{[]string{"import", "--store", "postgres://h/db", "--from", "x", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, errOut := run(t, c.args...)
		require.Equal(t, 2, code, strings.Join(c.args, " "))
		require.Contains(t, errOut, c.want, strings.Join(c.args, " "))
	}
}

// demo runs on a Postgres store (its sessions leased, fenced and written
// there), and list reads the children back from it.
func TestDemoRunsOnAPostgresStore(t *testing.T) {
	dsn := cluster.Database(t)
	code, stdout, stderr := run(t, "demo", "--store", dsn)
	require.Equal(t, 0, code, stderr)
	// Real time runs here (no synctest bubble over a Postgres connection):
	// a child the follow-up finds settled is resumed as a new epoch, with
	// its own start and end, so only the pairing and the five are fixed.
	starts, ends := strings.Count(stdout, "subagent/start "), strings.Count(stdout, "subagent/end ")
	require.GreaterOrEqual(t, ends, 5, stdout)
	require.Equal(t, starts, ends, stdout)
	root := regexp.MustCompile(`top-level agent (demo-[0-9a-f]+)`).FindStringSubmatch(stdout)
	require.Len(t, root, 2)

	code, listed, stderr := run(t, "list", "--store", dsn, root[1])
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 3, strings.Count(listed, "[complete]"))
	code, _, stderr = run(t, "demo", "--store", dsn, "--compression", "zstd")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--compression applies to a JSONL store folder")
}

// import copies the valid prefix of a log with a torn tail (an
// unterminated last line, or a bad line after the last turn end, as a
// crash leaves) and says so on stderr, naming the session, the file and
// the bytes left out in check's words; the import succeeds.
func TestImportNamesTheTornTailsItLeavesOut(t *testing.T) {
	src := t.TempDir()
	_, err := storegen.Generate(src, storegen.Shape{Sessions: 12, Children: 3, Turns: 2})
	require.NoError(t, err)
	torn := map[string]string{storegen.ChildID(1): `{"type":"turn/start","seq":`, storegen.ChildID(2): "{not json\n"}
	phrases := map[string]string{}
	for id, tail := range torn {
		path, err := logpath.Path(src, "/work/alpha", id)
		require.NoError(t, err)
		whole, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(whole, tail...), 0o600))
		phrases[id] = fmt.Sprintf("%s: %d bytes from byte %d on are torn or damaged", path, len(tail), len(whole))
	}
	dsn := cluster.Database(t)
	code, out, errOut := run(t, "import", "--from", src, "--store", dsn)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "imported 12 sessions from "+src+" (2 torn tails left out)\n", out)
	require.Equal(t, 2, strings.Count(errOut, "\n"), errOut)
	for id, phrase := range phrases {
		require.Contains(t, errOut, "dsh-actors import: "+id+" imported without its torn tail: "+phrase+"\n")
	}
	code, out, _ = run(t, "check", "--store", src)
	require.Equal(t, 1, code)
	for _, phrase := range phrases {
		require.Contains(t, out, phrase, "check says the same")
	}
}
