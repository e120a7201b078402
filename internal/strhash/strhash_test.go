package strhash

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFNV1aIsHashFNVs32BitFNV1a(t *testing.T) {
	for _, s := range []string{"", "a", "session-1", "/work/.dsh-actors/sessions/p/c", "会话"} {
		h := fnv.New32a()
		_, _ = h.Write([]byte(s))
		require.Equal(t, h.Sum32(), FNV1a(s), s)
	}
}

func TestFNV1aKnownVectors(t *testing.T) {
	require.Equal(t, uint32(0x811c9dc5), FNV1a(""))
	require.Equal(t, uint32(0xe40c292c), FNV1a("a"))
	require.Equal(t, uint32(0xbf9cf968), FNV1a("foobar"))
}

func TestFNV1aAllocatesNothing(t *testing.T) {
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = FNV1a("session-1") }))
}
