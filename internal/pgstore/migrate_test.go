package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/stretchr/testify/require"
)

// A store opened on a database whose schema is in place runs no DDL, so
// it never waits for (or deadlocks with) another process's transaction
// that writes the tables: here one holds a row of sessions FOR SHARE and
// an uncommitted inbox row, as an admission does, while the store opens.
func TestOpenOnACurrentSchemaDoesNotWaitForWriters(t *testing.T) {
	dsn := cluster.Database(t)
	first := openStore(t, dsn)
	require.NoError(t, first.Create(ctx, storetest.Header("s", ""), nil))
	conn := connect(t, dsn)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = 's' FOR SHARE`)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `INSERT INTO inbox (session_id, msg_id, body) VALUES ('s', '00000000-0000-4000-8000-000000000001', '{}')`)
	require.NoError(t, err)

	// The bound only turns a wait that would last until the writer
	// commits into a failure.
	opening, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	second, err := Open(opening, dsn)
	require.NoError(t, err, "opening waited for the writer's transaction")
	require.NoError(t, second.Close())
}
