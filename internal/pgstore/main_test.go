package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/pgtest"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

var cluster *pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }

// openStore opens a store on dsn, closed when t ends.
func openStore(t testing.TB, dsn string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// The Postgres store passes the store conformance suite; each open is
// another store (another owner) on the same database.
func TestPostgresConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() session.Fenced {
		dsn := cluster.Database(t)
		return func() session.Fenced { return openStore(t, dsn, WithTTL(time.Minute)) }
	})
}
