package inbox

import (
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestConcurrentMessageIDsAreDistinctCanonicalUUIDs: ids minted by many
// goroutines at once, across many blocks, are all distinct, and each is
// the canonical text of a version 4 uuid (as uuid.UUID.String writes it).
func TestConcurrentMessageIDsAreDistinctCanonicalUUIDs(t *testing.T) {
	const minters, each = 8, 10 * idsPerBlock
	ids := make([][]string, minters)
	var wg sync.WaitGroup
	for m := range minters {
		wg.Go(func() {
			for range each {
				ids[m] = append(ids[m], NewMessageID())
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, minted := range ids {
		for _, id := range minted {
			parsed, err := uuid.Parse(id)
			require.NoError(t, err)
			require.Equal(t, parsed.String(), id)
			require.Equal(t, uuid.Version(4), parsed.Version())
			require.Equal(t, uuid.RFC4122, parsed.Variant())
			require.False(t, seen[id], "id %s minted twice", id)
			seen[id] = true
		}
	}
	require.Len(t, seen, minters*each)
}
