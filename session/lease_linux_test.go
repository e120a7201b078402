package session

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/stretchr/testify/require"
)

// ownerFiles lists the owner files in root.
func ownerFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, logpath.OwnerFileName("*")))
	require.NoError(t, err)
	return files
}

// leaseRecord is the path of id's lease record in s (id stored under
// the test header's cwd).
func leaseRecord(t *testing.T, s *JSONL, id string) string {
	t.Helper()
	path, err := s.find(context.Background(), id)
	require.NoError(t, err)
	return filepath.Join(filepath.Dir(path), logpath.LeaseRecordName)
}

// A held lease is a hard link, in the session's folder, to the owner file
// of the store holding it; release removes it, Close removes the owner
// file.
func TestALeaseIsARecordLinkedToItsStoresOwnerFile(t *testing.T) {
	ctx := context.Background()
	s, err := OpenJSONL(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, header("linked"), nil))
	record := leaseRecord(t, s, "linked")

	epoch, err := s.Acquire(ctx, "linked")
	require.NoError(t, err)
	owners := ownerFiles(t, s.Root())
	require.Len(t, owners, 1, "one owner file for one lease")
	got, err := os.Stat(record)
	require.NoError(t, err, "the lease is recorded in the session's folder")
	owner, err := os.Stat(owners[0])
	require.NoError(t, err)
	require.True(t, os.SameFile(got, owner), "the record is the owner file, linked")
	require.NoFileExists(t, filepath.Join(s.Root(), ".session-leases"), "the single lock file of old is not used")

	require.NoError(t, s.Release(ctx, "linked", epoch))
	require.NoFileExists(t, record, "released, the record is gone")
	require.NoError(t, s.Close())
	require.Empty(t, ownerFiles(t, s.Root()), "closed, the owner file is gone")
}

// A store that closes holding a lease leaves its record behind with an
// unlocked owner: another store takes the lease over, as it would from a
// process that died. A record copied in as a plain file (no owner lock
// at all) is taken over too.
func TestARecordWhoseOwnerIsGoneIsTakenOver(t *testing.T) {
	ctx := context.Background()
	a, err := OpenJSONL(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, a.Create(ctx, header("left"), nil))
	_, err = a.Acquire(ctx, "left")
	require.NoError(t, err)
	require.NoError(t, a.Close())
	record := leaseRecord(t, openAt(t, a.Root()), "left")
	require.FileExists(t, record, "the lease was never released")

	b := openAt(t, a.Root())
	epoch, err := b.Acquire(ctx, "left")
	require.NoError(t, err, "the record's owner is gone")
	require.NoError(t, b.Release(ctx, "left", epoch))

	require.NoError(t, os.WriteFile(record, nil, 0o600))
	epoch, err = b.Acquire(ctx, "left")
	require.NoError(t, err, "a plain file owned by no lock holds nothing")
	_, err = openAt(t, a.Root()).Acquire(ctx, "left")
	require.ErrorIs(t, err, fault.LeaseHeld, "the taken-over lease excludes as any other")
	require.NoError(t, b.Release(ctx, "left", epoch))
}

// The kernel walks every byte-range lock of a file on each lock and
// unlock, so a lease must not add a lock to a file shared with other
// leases: with hundreds of live leases, no file of the store carries more
// than one lock and the store holds at most leaseShards more files open
// than without them. The records are spread over several owner files (a
// file system caps the links to one file: ext4 at 65,000).
func TestLiveLeasesAddNoLockToASharedFile(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, withKeptFiles(0))
	const live = 300
	ids := make([]string, live)
	for i := range ids {
		ids[i] = fmt.Sprintf("live-%d", i)
		require.NoError(t, s.Create(ctx, header(ids[i]), nil))
	}
	fds := openFiles(t)
	for _, id := range ids {
		_, err := s.Acquire(ctx, id)
		require.NoError(t, err)
	}
	require.LessOrEqual(t, openFiles(t), fds+leaseShards, "the leases keep at most leaseShards files open")
	require.Greater(t, len(ownerFiles(t, s.Root())), 1, "the records are spread over several owner files")
	for ino, n := range locksPerInode(t, s.Root()) {
		require.LessOrEqual(t, n, 1, "inode %d of the store carries %d locks", ino, n)
	}
}

func openFiles(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// locksPerInode counts the locks /proc/locks lists on each file under
// root, by inode number.
func locksPerInode(t *testing.T, root string) map[uint64]int {
	t.Helper()
	inodes := map[uint64]bool{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			inodes[info.Sys().(*syscall.Stat_t).Ino] = true
		}
		return err
	}))
	f, err := os.Open("/proc/locks")
	require.NoError(t, err)
	defer f.Close()
	counts := map[uint64]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for field := range strings.FieldsSeq(sc.Text()) {
			parts := strings.Split(field, ":")
			if len(parts) != 3 {
				continue
			}
			if ino, err := strconv.ParseUint(parts[2], 10, 64); err == nil && inodes[ino] {
				counts[ino]++
			}
		}
	}
	require.NoError(t, sc.Err())
	return counts
}

// BenchmarkLeaseWithLiveSessions times one lease taken and given back
// while others are held by the same store: the per-lease cost at 10,000
// live against 100 is the figure to watch (flat is right).
func BenchmarkLeaseWithLiveSessions(b *testing.B) {
	for _, live := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("live=%d", live), func(b *testing.B) {
			ctx := context.Background()
			s, err := OpenJSONL(b.TempDir(), withKeptFiles(0))
			require.NoError(b, err)
			defer func() { require.NoError(b, s.Close()) }()
			for i := range live + 1 {
				require.NoError(b, s.Create(ctx, header(fmt.Sprintf("s-%d", i)), nil))
			}
			for i := 1; i <= live; i++ {
				_, err := s.Acquire(ctx, fmt.Sprintf("s-%d", i))
				require.NoError(b, err)
			}
			for b.Loop() {
				epoch, err := s.Acquire(ctx, "s-0")
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Release(ctx, "s-0", epoch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A release removes the record without reading it first, so it must come
// from a store that still holds its owner files: a store released after
// it closed (its record left behind, then taken over by another store)
// leaves the new holder's record in place, and that holder still
// excludes a third store.
func TestAReleaseAfterCloseLeavesTheNewHoldersRecord(t *testing.T) {
	ctx := context.Background()
	a, err := OpenJSONL(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, a.Create(ctx, header("handed"), nil))
	old, err := a.Acquire(ctx, "handed")
	require.NoError(t, err)
	require.NoError(t, a.Close())

	b := openAt(t, a.Root())
	epoch, err := b.Acquire(ctx, "handed")
	require.NoError(t, err, "the closed store's record has no live owner")
	require.NoError(t, a.Release(ctx, "handed", old), "the closed store gives up what it no longer holds")
	require.FileExists(t, leaseRecord(t, b, "handed"), "the new holder's record stays")
	_, err = openAt(t, a.Root()).Acquire(ctx, "handed")
	require.ErrorIs(t, err, fault.LeaseHeld, "the new holder still excludes")
	require.NoError(t, b.Release(ctx, "handed", epoch))
	require.NoFileExists(t, leaseRecord(t, b, "handed"))
}

// HeldElsewhere tells whether another store over the root holds a
// session's lease, without taking or disturbing it: not for an unknown
// id, a lease no one holds or this store's own; yes for another store's,
// which then still excludes this store and is its holder's to release;
// not for a record whose holder closed without releasing, which stays on
// disk until an Acquire clears it.
func TestHeldElsewhereProbesALeaseWithoutTouchingIt(t *testing.T) {
	ctx := context.Background()
	a := openStore(t)
	b := openAt(t, a.Root())
	require.NoError(t, a.Create(ctx, header("probed"), nil))
	held := func(s *JSONL) bool {
		t.Helper()
		ok, err := s.HeldElsewhere(ctx, "probed")
		require.NoError(t, err)
		return ok
	}
	ok, err := a.HeldElsewhere(ctx, "ghost")
	require.NoError(t, err)
	require.False(t, ok, "an unknown id")
	require.False(t, held(b), "no one holds it")

	epoch, err := a.Acquire(ctx, "probed")
	require.NoError(t, err)
	require.False(t, held(a), "its own lease is not elsewhere")
	require.True(t, held(b), "another store's lease")
	require.True(t, held(b), "probing twice changes nothing")
	_, err = b.Acquire(ctx, "probed")
	require.ErrorIs(t, err, fault.LeaseHeld, "the probe took nothing over")
	require.NoError(t, a.Release(ctx, "probed", epoch))
	require.False(t, held(b), "released")

	gone, err := OpenJSONL(a.Root())
	require.NoError(t, err)
	_, err = gone.Acquire(ctx, "probed")
	require.NoError(t, err)
	require.NoError(t, gone.Close())
	require.False(t, held(b), "its holder is gone")
	require.FileExists(t, leaseRecord(t, b, "probed"), "the probe left the dead record alone")
	_, err = b.Acquire(ctx, "probed")
	require.NoError(t, err, "an Acquire clears it")
}
