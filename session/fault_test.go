package session

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/stretchr/testify/require"
)

// failedStoreFixture returns a store whose log "f" holds two durable events, the
// fault FS behind it and the log's path.
func failedStoreFixture(t *testing.T) (*JSONL, *faultfs.FS, string) {
	t.Helper()
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	h := header("f")
	require.NoError(t, s.Create(context.Background(), h, turnEvents(0, 2)))
	return s, faults, logPathOf(t, s, h)
}

// requireFailedLog checks that appends and flushes of "f" are refused.
func requireFailedLog(t *testing.T, s *JSONL, cause error) {
	t.Helper()
	ctx := context.Background()
	err := s.Append(ctx, "f", turnEvents(2, 1))
	require.ErrorIs(t, err, ErrLogFailed)
	require.ErrorIs(t, err, cause)
	ok, err := s.Flush(ctx, "f")
	require.False(t, ok)
	require.ErrorIs(t, err, ErrLogFailed)
}

func TestFsyncFailureIsNotAcknowledgedAndFailsTheLog(t *testing.T) {
	s, faults, path := failedStoreFixture(t)
	before := statFile(t, path)
	faults.FailSync(1, syscall.EIO)

	err := s.Append(context.Background(), "f", turnEvents(2, 3))
	require.ErrorIs(t, err, ErrLogFailed)
	require.ErrorIs(t, err, syscall.EIO)
	require.Equal(t, before.content, statFile(t, path).content, "the batch was rolled back")
	requireFailedLog(t, s, syscall.EIO)

	reopened, err := OpenJSONL(s.Root())
	require.NoError(t, err)
	defer reopened.Close()
	log, err := reopened.Inspect(context.Background(), "f")
	require.NoError(t, err)
	require.Equal(t, turnEvents(0, 2), log.Events, "nothing durable was lost")
}

func TestShortWriteThenENOSPCRollsBack(t *testing.T) {
	s, faults, path := failedStoreFixture(t)
	before := statFile(t, path)
	faults.ShortWriteThenENOSPC()

	err := s.Append(context.Background(), "f", turnEvents(2, 3))
	require.ErrorIs(t, err, ErrLogFailed)
	require.ErrorIs(t, err, syscall.ENOSPC)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, int64(len(before.content)), info.Size(), "the partial batch was truncated away")
	require.Equal(t, before.content, statFile(t, path).content)
	requireFailedLog(t, s, syscall.ENOSPC)
}

func TestLiveWriteFailureRefusesLaterAppends(t *testing.T) {
	ctx := context.Background()
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("live-f"), nil)
	require.NoError(t, err)
	_, err = l.Append("feedback/record", map[string]int{"a": 1})
	require.NoError(t, err)
	ok, err := reg.Flush(ctx, l)
	require.NoError(t, err)
	require.True(t, ok)

	faults.FailSync(1, syscall.EIO)
	_, err = l.Append("feedback/record", map[string]int{"a": 2})
	require.NoError(t, err, "the event is in memory at once")
	ok, err = reg.Flush(ctx, l)
	require.False(t, ok)
	require.ErrorIs(t, err, ErrLogFailed)
	require.ErrorIs(t, err, syscall.EIO)

	_, err = l.Append("feedback/record", nil)
	require.ErrorIs(t, err, ErrLogFailed)
	require.Equal(t, 2, l.Len())
	err = reg.Release(ctx, l)
	require.ErrorIs(t, err, ErrLogFailed, "release reports the failure")
	require.Nil(t, reg.Get("live-f"), "but still drops the session")
}

func TestCreateFailureLeavesNoLog(t *testing.T) {
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	faults.FailSync(1, syscall.EIO)
	err := s.Create(context.Background(), header("c"), turnEvents(0, 1))
	require.ErrorIs(t, err, syscall.EIO)
	_, err = s.Inspect(context.Background(), "c")
	require.ErrorIs(t, err, ErrNotFound)
	entries, err := os.ReadDir(s.Root() + "/--work-project--/c")
	require.NoError(t, err)
	require.Empty(t, entries, "the temporary file was removed")
	require.NoError(t, s.Create(context.Background(), header("c"), nil), "the id is still free")
}

func TestFaultFSCountsOnlyDataSyncs(t *testing.T) {
	s, faults, _ := failedStoreFixture(t)
	n := faults.Syncs()
	require.NoError(t, s.Append(context.Background(), "f", turnEvents(2, 1)))
	require.Equal(t, n+1, faults.Syncs())
}

// A log failed by a full disk is loaded again once the disk has room, in
// the same process: Load cuts the file back to what was acknowledged and
// later appends go to the end of that. While the disk is still full, the
// next append fails the log again.
func TestALogFailedByAFullDiskLoadsAgainOnceThereIsRoom(t *testing.T) {
	ctx := context.Background()
	s, faults, path := failedStoreFixture(t)
	before := statFile(t, path)
	faults.SetFull(true)
	err := s.Append(ctx, "f", turnEvents(2, 3))
	require.ErrorIs(t, err, ErrLogFailed)
	require.ErrorIs(t, err, syscall.ENOSPC)
	requireFailedLog(t, s, syscall.ENOSPC)
	require.Equal(t, before.content, statFile(t, path).content)

	log, err := s.Load(ctx, "f")
	require.NoError(t, err, "loading needs no room")
	require.Equal(t, turnEvents(0, 2), log.Events)
	require.ErrorIs(t, s.Append(ctx, "f", turnEvents(2, 1)), syscall.ENOSPC, "still full")

	faults.SetFull(false)
	log, err = s.Load(ctx, "f")
	require.NoError(t, err)
	require.Equal(t, turnEvents(0, 2), log.Events)
	require.NoError(t, s.Append(ctx, "f", turnEvents(2, 1)))
	log, err = s.Inspect(ctx, "f")
	require.NoError(t, err)
	require.Equal(t, turnEvents(0, 3), log.Events)
}

// A live session whose write-behind failed on a full disk is released
// with the failure, then resumed once the disk has room, without
// reopening the store.
func TestALiveSessionFailedByAFullDiskResumesOnceThereIsRoom(t *testing.T) {
	ctx := context.Background()
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("live-full"), nil)
	require.NoError(t, err)
	_, err = l.Append("feedback/record", map[string]int{"a": 1})
	require.NoError(t, err)
	_, err = reg.Flush(ctx, l)
	require.NoError(t, err)

	faults.SetFull(true)
	_, err = l.Append("feedback/record", map[string]int{"a": 2})
	require.NoError(t, err)
	_, err = reg.Flush(ctx, l)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorIs(t, reg.Release(ctx, l), ErrLogFailed)
	faults.SetFull(false)

	resumed, err := reg.Resume(ctx, "live-full")
	require.NoError(t, err)
	var notes []string
	for _, e := range resumed.Events() {
		if e.Type == "feedback/record" {
			notes = append(notes, string(e.Data))
		}
	}
	require.Equal(t, []string{`{"a":1}`}, notes, "only the durable event")
	_, err = resumed.Append("feedback/record", map[string]int{"a": 3})
	require.NoError(t, err)
	ok, err := reg.Flush(ctx, resumed)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, reg.Release(ctx, resumed))
}

// The full file system fails every write, including a Create's.
func TestFaultFSFullFailsEveryWrite(t *testing.T) {
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	faults.SetFull(true)
	err := s.Create(context.Background(), header("c"), turnEvents(0, 1))
	require.ErrorIs(t, err, syscall.ENOSPC)
	faults.SetFull(false)
	require.NoError(t, s.Create(context.Background(), header("c"), turnEvents(0, 1)))
}

// OnWriteFailure hears of a failed write-behind once, with the events that
// will never be durable; registered after the failure, it hears at once.
func TestOnWriteFailureGetsTheUnwrittenEvents(t *testing.T) {
	ctx := context.Background()
	faults := faultfs.New(nil)
	s := openStore(t, WithFS(faults))
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("hooked"), nil)
	require.NoError(t, err)
	_, err = reg.Flush(ctx, l)
	require.NoError(t, err)
	type failure struct {
		types []string
		err   error
	}
	heard := make(chan failure, 2)
	hook := func(unwritten []Event, err error) {
		var types []string
		for _, e := range unwritten {
			types = append(types, e.Type)
		}
		heard <- failure{types, err}
	}
	l.OnWriteFailure(hook)
	faults.SetFull(true)
	_, err = l.Append("goal/change", nil)
	require.NoError(t, err)
	_, err = reg.Flush(ctx, l)
	require.ErrorIs(t, err, ErrLogFailed)
	got := <-heard
	require.Equal(t, []string{"goal/change"}, got.types)
	require.ErrorIs(t, got.err, ErrLogFailed)
	require.ErrorIs(t, got.err, syscall.ENOSPC)

	l.OnWriteFailure(hook)
	require.Equal(t, []string{"goal/change"}, (<-heard).types)
	require.Empty(t, heard, "once per registration")
	require.ErrorIs(t, reg.Release(ctx, l), ErrLogFailed)
}
