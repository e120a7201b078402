package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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

	code, _, errOut = run(t, "import", "--from", src, "--store", dsn)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "after 0 sessions")
	require.Contains(t, errOut, "stored already")
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
	require.Equal(t, 5, strings.Count(stdout, "subagent/end "))
	root := regexp.MustCompile(`top-level agent (demo-[0-9a-f]+)`).FindStringSubmatch(stdout)
	require.Len(t, root, 2)

	code, listed, stderr := run(t, "list", "--store", dsn, root[1])
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 3, strings.Count(listed, "[complete]"))
	code, _, stderr = run(t, "demo", "--store", dsn, "--compression", "zstd")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--compression applies to a JSONL store folder")
}
