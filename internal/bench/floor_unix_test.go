//go:build unix

package bench

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A floor forest larger than the process may hold open still drains: the
// nodes beyond the kept files reopen their log for the append. Run with
// an open-file limit 20 above what is open, a 30-agent forest would fail
// with "too many open files" if each node kept its file.
func TestTheDrainFloorRunsBeyondTheOpenFileLimit(t *testing.T) {
	kept := floorKeptFiles
	floorKeptFiles = func() int { return 4 }
	t.Cleanup(func() { floorKeptFiles = kept })
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("needs /proc/self/fd to count the open files")
	}
	low := lim
	low.Cur = uint64(len(entries) + 20)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	t.Cleanup(func() { require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)) })

	samples, agents, err := DrainFloor(context.Background(), t.TempDir(), 5, 2, 1)
	require.NoError(t, err)
	require.Equal(t, 30, agents)
	require.Len(t, samples, 1)
}
