package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

var cluster *Cluster

func TestMain(m *testing.M) { Main(m, &cluster) }

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func TestEachTestGetsItsOwnEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	first, second := cluster.Database(t), cluster.Database(t)
	require.NotEqual(t, first, second)
	require.Contains(t, first, "127.0.0.1")
	a, b := connect(t, first), connect(t, second)
	_, err := a.Exec(ctx, `CREATE TABLE only_here (n int)`)
	require.NoError(t, err)
	var n int
	require.NoError(t, b.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'`).Scan(&n))
	require.Zero(t, n, "a table made in one database is not in another")
	var version string
	require.NoError(t, a.QueryRow(ctx, `SHOW server_version`).Scan(&version))
	t.Logf("server %s at %s", version, first)
}

func TestADatabaseIsDroppedWhenItsTestEnds(t *testing.T) {
	var dsn string
	t.Run("inner", func(t *testing.T) { dsn = cluster.Database(t) })
	_, err := pgx.Connect(context.Background(), dsn)
	require.ErrorContains(t, err, "does not exist")
}

func TestWithoutAServerDatabaseSkipsNamingTheReason(t *testing.T) {
	var skipped bool
	t.Run("inner", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		(&Cluster{reason: errMissing}).Database(t)
	})
	require.True(t, skipped)
}

var errMissing = errorString("postgres binaries not found")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestSanitizeKeepsDatabaseNamesShortAndPlain(t *testing.T) {
	require.Equal(t, "testfoo_bar_baz", sanitize("TestFoo/bar-baz"))
	require.Len(t, sanitize(string(make([]byte, 100))), 40)
}
