package session_test

import (
	"log/slog"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// The JSONL store passes the store conformance suite; each open is
// another store over the same root (another process's view).
func TestJSONLConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() session.Fenced {
		root := t.TempDir()
		return func() session.Fenced {
			s, err := session.OpenJSONL(root, session.WithLogger(slog.New(slog.DiscardHandler)), session.WithDurableAdmission())
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		}
	})
}
