package query_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
)

// The catalog suite of this package runs every world listing through the
// derived index as well (query.IndexedCatalog).
func init() {
	query.IndexedCatalog = func(t *testing.T, root string, sessions *session.Sessions) (query.Catalog, func()) {
		db, err := index.Open(context.Background(), root, sessions)
		require.NoError(t, err)
		return db, func() { require.NoError(t, db.Close()) }
	}
}
