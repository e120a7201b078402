package host

import (
	"context"
	"errors"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/stretchr/testify/require"
)

// failingIndex is a derived index whose searches fail as SQLite fails on
// a full disk.
type failingIndex struct{ derivedIndex }

var errIndexFull = errors.New("index: database or disk is full (5)")

func (failingIndex) Search(context.Context, index.SearchRequest) (index.Page, error) {
	return index.Page{}, errIndexFull
}

// TestSessionSearchReadsTheLogsWhenTheIndexFails: a derived index that
// fails (a full disk) never fails session.search: the logs answer it, as
// they answer without an index.
func TestSessionSearchReadsTheLogsWhenTheIndexFails(t *testing.T) {
	s := newRuntimeStack(t)
	talkAndStore(t, s.rt, "zebra", "reply the zebra crossed")
	s.backend.index = failingIndex{}
	value := searched(t, s.recorder, map[string]any{"query": "zebra"})
	require.NotEmpty(t, value.Hits, "the logs answered")
	for _, h := range value.Hits {
		require.Equal(t, "zebra", h.SessionID)
	}
}
