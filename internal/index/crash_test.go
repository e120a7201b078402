package index

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/session"
)

// crashEnv names the store root whose index a re-executed test binary
// starts building and dies in the middle of (runCrashingBuild).
const crashEnv = "DSH_INDEX_TEST_CRASH_ROOT"

// crashedMidBuild is the crashing build's exit status when it died with
// uncommitted pages of the build already written to the index's WAL.
const crashedMidBuild = 3

// crashingLister lists the store's logs and, at the log numbered crashAt,
// ends the process at once (no rollback, no close: a crash), reporting
// whether the build had written pages to the WAL by then.
type crashingLister struct {
	session.Store
	wal     string
	crashAt int
	seen    int
}

func (c *crashingLister) ListLogs(ctx context.Context, fn func(session.Header, *session.Log, error) error) error {
	return c.Store.(session.LogLister).ListLogs(ctx, func(h session.Header, log *session.Log, err error) error {
		if c.seen++; c.seen == c.crashAt {
			info, statErr := os.Stat(c.wal)
			if statErr == nil && info.Size() > 0 {
				os.Exit(crashedMidBuild)
			}
			fmt.Fprintln(os.Stderr, "no page of the build reached the WAL before the crash")
			os.Exit(1)
		}
		return fn(h, log, err)
	})
}

// runCrashingBuild is the crashing process: it opens root's index with a
// page cache of a few pages (so the build spills pages to the WAL early)
// and builds it, dying halfway through the store's logs.
func runCrashingBuild(root string) int {
	ctx := context.Background()
	store, err := session.OpenJSONL(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	headers, err := store.List(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lister := &crashingLister{Store: store, crashAt: len(headers) / 2}
	db, err := Open(ctx, root, session.NewSessions(lister))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lister.wal = db.Path() + "-wal"
	db.sql.SetMaxOpenConns(1)
	if _, err := db.sql.ExecContext(ctx, `PRAGMA cache_size = 4`); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = db.Titles(ctx)
	fmt.Fprintln(os.Stderr, "the build did not crash:", err)
	return 1
}

// TestACrashMidBuildLeavesNoHalfIndex: a process dies halfway through
// building the index from nothing, with pages of the build already in
// the WAL. The next process finds no half-built index: it builds from
// nothing again (each log read once), the file passes SQLite's integrity
// check, and search, titles and listing answer as the unindexed reader.
func TestACrashMidBuildLeavesNoHalfIndex(t *testing.T) {
	f := newFixtureTB(t, storegen.Shape{Sessions: 300, Children: 8, Turns: 1})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+f.root)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the crashing build: %s", out)
	require.Equal(t, crashedMidBuild, exit.ExitCode(), "the crashing build: %s", out)

	db := f.open()
	_, err = db.Titles(context.Background())
	require.NoError(t, err)
	require.Equal(t, 300, f.store.count(), "the next process builds from nothing, reading each log once")
	requireIntact(t, db.Path())
	f.requireSameSearch(db)
	f.requireSame(db, storegen.Parent)
}
