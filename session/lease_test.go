package session

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

// openAt opens a second store over the root of s.
func openAt(t *testing.T, root string) *JSONL {
	t.Helper()
	s, err := OpenJSONL(root, WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func readLog(t *testing.T, s *JSONL, id string) []Event {
	t.Helper()
	log, err := s.Inspect(context.Background(), id)
	require.NoError(t, err)
	return log.Events
}

func TestAStaleEpochIsFencedAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Create(ctx, header("f"), nil))
	first, err := s.Acquire(ctx, "f")
	require.NoError(t, err)
	require.NoError(t, s.AppendFenced(ctx, "f", first, []Event{ev(0, "feedback/record", "{}")}))

	_, err = s.Acquire(ctx, "f")
	require.ErrorIs(t, err, fault.LeaseHeld, "the store itself holds it")
	require.NoError(t, s.Release(ctx, "f", first))
	require.ErrorIs(t, s.AppendFenced(ctx, "f", first, []Event{ev(1, "late", "{}")}), fault.Fenced,
		"a released epoch writes nothing")

	second, err := s.Acquire(ctx, "f")
	require.NoError(t, err)
	require.Greater(t, second, first)
	err = s.AppendFenced(ctx, "f", first, []Event{ev(1, "sandbox/mode", "{}")})
	require.ErrorIs(t, err, fault.Fenced)
	require.Equal(t, fault.Fenced, fault.CodeOf(err))
	require.Contains(t, err.Error(), `session "f": epoch 1`)
	require.NoError(t, s.AppendFenced(ctx, "f", second, []Event{ev(1, "schedule/change", "{}")}))
	events := readLog(t, s, "f")
	require.Len(t, events, 2)
	require.Equal(t, "schedule/change", events[1].Type)

	require.NoError(t, s.Release(ctx, "f", first), "releasing a stale epoch is a no-op")
	require.NoError(t, s.Release(ctx, "f", second))
	require.NoError(t, s.Release(ctx, "f", second), "twice too")
}

func TestAcquireNeedsAStoredSession(t *testing.T) {
	_, err := openStore(t).Acquire(context.Background(), "nowhere")
	require.ErrorIs(t, err, ErrNotFound)
}

// Two stores over one root exclude each other as two processes do: the
// second can neither acquire, resume nor repair the first's session.
func TestASecondStoreOverTheRootIsRefusedTheLease(t *testing.T) {
	ctx := context.Background()
	a := openStore(t)
	b := openAt(t, a.Root())
	reg := NewSessions(a)
	l, err := reg.Create(ctx, header("shared"), nil)
	require.NoError(t, err)
	_, err = l.AppendThrough("feedback/record", nil)
	require.NoError(t, err)

	_, err = b.Acquire(ctx, "shared")
	require.ErrorIs(t, err, fault.LeaseHeld)
	require.Contains(t, err.Error(), "another process")
	_, err = NewSessions(b).Resume(ctx, "shared")
	require.ErrorIs(t, err, fault.LeaseHeld)
	_, err = b.Load(ctx, "shared")
	require.ErrorIs(t, err, fault.LeaseHeld, "no repair under a live writer")
	_, err = b.Inspect(ctx, "shared")
	require.NoError(t, err, "reading needs no lease")

	require.NoError(t, reg.Release(ctx, l))
	resumed, err := NewSessions(b).Resume(ctx, "shared")
	require.NoError(t, err, "released, the other store takes it")
	_, err = resumed.AppendThrough("after", nil)
	require.NoError(t, err)
	_, err = a.Acquire(ctx, "shared")
	require.ErrorIs(t, err, fault.LeaseHeld, "now the first store is refused")
	require.NoError(t, resumed.s.Release(ctx, resumed))
}

// The registry writes under its lease: once the lease is gone (taken by
// nobody else here, released behind its back) its write-behind fails as
// FENCED and the session refuses later appends.
func TestALiveSessionWritesUnderItsLease(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("leased"), nil)
	require.NoError(t, err)
	require.NotZero(t, l.epoch)
	require.NoError(t, s.Release(ctx, "leased", l.epoch))
	_, err = l.AppendThrough("fenced", nil)
	require.ErrorIs(t, err, fault.Fenced)
	require.ErrorIs(t, err, ErrLogFailed)
	require.Empty(t, readLog(t, s, "leased"))
	require.ErrorIs(t, reg.Release(ctx, l), fault.Fenced)
}

// leaseHelperEnv names, in the helper process, the root and session id
// it leases.
const leaseHelperEnv = "DSH_SESSION_LEASE_HELPER"

// TestLeaseHelperProcess is the second process of the test below: it
// resumes the session, says "held" and keeps it until its stdin closes.
func TestLeaseHelperProcess(t *testing.T) {
	root := os.Getenv(leaseHelperEnv)
	if root == "" {
		t.Skip("runs only as the helper process of TestAnotherProcessHoldsTheLeaseUntilItDies")
	}
	ctx := context.Background()
	s, err := OpenJSONL(root, WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	reg := NewSessions(s)
	l, err := reg.Resume(ctx, "proc")
	require.NoError(t, err)
	_, err = l.AppendThrough("hook/invoked", nil)
	require.NoError(t, err)
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
	require.NoError(t, reg.Release(ctx, l))
	require.NoError(t, s.Close())
}

func TestAnotherProcessHoldsTheLeaseUntilItDies(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Create(ctx, header("proc"), nil))

	helper := exec.Command(os.Args[0], "-test.run=^TestLeaseHelperProcess$", "-test.count=1")
	helper.Env = append(os.Environ(), leaseHelperEnv+"="+s.Root())
	stdin, err := helper.StdinPipe()
	require.NoError(t, err)
	stdout, err := helper.StdoutPipe()
	require.NoError(t, err)
	helper.Stderr = os.Stderr
	require.NoError(t, helper.Start())
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", line)

	_, err = s.Acquire(ctx, "proc")
	require.ErrorIs(t, err, fault.LeaseHeld)
	_, err = NewSessions(s).Resume(ctx, "proc")
	require.ErrorIs(t, err, fault.LeaseHeld)
	_, err = s.Load(ctx, "proc")
	require.ErrorIs(t, err, fault.LeaseHeld)

	require.NoError(t, helper.Process.Kill()) // kill -9: no release, the kernel drops the lock
	_ = helper.Wait()
	_ = stdin.Close()
	reg := NewSessions(s)
	l, err := reg.Resume(ctx, "proc")
	require.NoError(t, err)
	_, err = l.AppendThrough("hook/result", nil)
	require.NoError(t, err)
	require.NoError(t, reg.Release(ctx, l))
	var types []string
	for _, e := range readLog(t, s, "proc") {
		types = append(types, e.Type)
	}
	require.Equal(t, []string{"session/end-seed", "hook/invoked", "session/end-seed", "hook/result"}, types)
}

// A session folder's owner file slot is FNV-1a of its path modulo the
// slots, and its record is the lease record file inside it.
func TestALeaseRecordsSlotAndPathFollowItsFolder(t *testing.T) {
	for _, dir := range []string{"/", "/tmp/root/-home-x/abc", filepath.Join(t.TempDir(), "p", "é~0041")} {
		h := fnv.New32a()
		_, _ = h.Write([]byte(dir))
		require.Equal(t, int(h.Sum32()%leaseShards), shard(dir), dir)
		require.Equal(t, filepath.Join(dir, "session.lease"), filepath.Clean(recordPath(dir)), dir)
	}
}
