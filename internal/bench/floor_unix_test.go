//go:build unix

package bench

import (
	"context"
	"os"
	"path/filepath"
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

// The end-of-life floor writes every log, the kept and the reopened
// ones, and unlinks every lease record; measureEndIO leaves nothing
// behind.
func TestTheEndOfLifeFloorWritesEveryLogAndUnlinksEveryLease(t *testing.T) {
	dir := t.TempDir()
	p, err := measureEndIO(dir, 50)
	if err != nil {
		t.Fatal(err)
	}
	if left, err := os.ReadDir(dir); p.Wall <= 0 || err != nil || len(left) != 0 {
		t.Errorf("end-of-life floor at 50: %+v, left %v (%v)", p, left, err)
	}
	kept := storeKeptFiles
	storeKeptFiles = func() int { return 20 }
	t.Cleanup(func() { storeKeptFiles = kept })
	project, logs, err := endIOLogs(dir, 50)
	defer closeEndIO(project, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		if (l.fd >= 0) != (i < 20) {
			t.Errorf("log %d kept open: %v", i, l.fd >= 0)
		}
		if err := l.end(project); err != nil {
			t.Fatal(err)
		}
		if l.fd >= 0 {
			syscall.Close(l.fd)
		}
		folder := filepath.Join(dir, "-work-project", l.name)
		data, err := os.ReadFile(filepath.Join(folder, "session.jsonl"))
		if err != nil || string(data) != string(endIOHead)+string(floorLine) {
			t.Errorf("log %d: %q (%v)", i, data, err)
		}
		if _, err := os.Stat(filepath.Join(folder, "session.lease")); !os.IsNotExist(err) {
			t.Errorf("lease record of log %d: %v", i, err)
		}
	}
}
