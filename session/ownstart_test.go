package session

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// OwnStart is where a session's own events begin: past the seed it
// inherited (SeedLength), at 0 when it inherited none; a negative
// SeedLength, which no store writes, counts as none.
func TestHeaderOwnStart(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		seed *int
		want int
	}{{nil, 0}, {n(0), 0}, {n(42), 42}, {n(-1), 0}} {
		require.Equal(t, tc.want, Header{SeedLength: tc.seed}.OwnStart(), "%v", tc.seed)
	}
}
