package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/strhash"
)

// leaseTable is a JSONL store's leases. A held lease is a record in the
// session's folder (logpath.LeaseRecordName): a hard link to one of the
// store's owner files, on whose byte 0 the store holds an
// open-file-description lock until it closes. Taking a lease is one
// link(2), giving it up one unlink(2), whatever the number of live
// sessions, and the store keeps at most leaseShards files open for all
// of them. A record whose owner file is no longer locked was left by a
// store that closed without releasing or a process that died: it is
// removed and the lease taken (see clearDeadRecord).
//
// The records are spread over leaseShards owner files by a hash of the
// session's folder: a file system caps the links to one file (ext4 at
// 65,000), and every link and unlink of one file takes that file's inode
// lock, so one owner file would refuse the 65,000th live session and
// serialize every release of a drain.
//
// Byte-range locks on one shared file would do the same with no records,
// but the kernel walks every lock of a file on each lock and unlock, so
// each lease would cost O(live sessions).
type leaseTable struct {
	root string
	dirs *projectDirs // removes records relative to their project folder

	owners [leaseShards]atomic.Pointer[leaseOwner] // each set on first use, nil again on close

	mu     sync.RWMutex // serializes opening an owner file and close; unlock holds it shared
	closed bool
}

// leaseOwner is a store's open, locked owner file.
type leaseOwner struct {
	file *os.File
	path string
	info os.FileInfo
}

// ownerByte is the byte of an owner file its store keeps locked;
// takeoverByte the one a store locks while it removes a dead record.
const (
	ownerByte    = 0
	takeoverByte = 1
)

// leaseShards is how many owner files a store spreads its lease records
// over (see leaseTable).
const leaseShards = 16

// shard is the owner file slot of the session folder dir: FNV-1a of its
// path, computed in place (a drain releases thousands of leases).
func shard(dir string) int { return int(strhash.FNV1a(dir) % leaseShards) }

// recordPath is the lease record's path in the session folder dir, which
// is clean already (a folder the store found or made).
func recordPath(dir string) string {
	return dir + string(filepath.Separator) + logpath.LeaseRecordName
}

// leaseAttempts bounds the link attempts of one lock: a record can only
// vanish under a racing lock so many times before one of them holds it.
const leaseAttempts = 4

// lock records this store's lease in the session folder dir without
// waiting: false when another process (or another store over this root)
// holds it. A folder this process cannot write has nothing to protect:
// lock succeeds without a record.
func (t *leaseTable) lock(dir string) (bool, error) {
	if !leaseRecords {
		return true, nil
	}
	owner, err := t.open(shard(dir))
	if owner == nil || err != nil {
		return err == nil, err
	}
	record := recordPath(dir)
	for range leaseAttempts {
		err := os.Link(owner.path, record)
		switch {
		case err == nil:
			return true, nil
		case unwritable(err):
			return true, nil
		case !errors.Is(err, fs.ErrExist):
			return false, err
		}
		if cleared, err := t.clearDeadRecord(record, owner); err != nil || !cleared {
			return false, err
		}
	}
	return false, nil
}

// clearDeadRecord removes the lease record at path when its owner file is
// this store's (a record a failed unlock left) or unlocked (its store is
// gone); true when the record is gone, so the lease may be tried again,
// false while a live store holds it or another store is clearing it.
func (t *leaseTable) clearDeadRecord(path string, owner *leaseOwner) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !os.SameFile(info, owner.info) {
		if live, err := rangeLocked(f, ownerByte); err != nil || live {
			return false, err
		}
		if ok, err := lockRange(f, takeoverByte); err != nil || !ok {
			return false, err
		}
	}
	if now, err := os.Lstat(path); err != nil || !os.SameFile(now, info) {
		return true, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// unlock removes this store's lease record from the session folder dir.
// It removes the record without looking at it first: while this store
// is open its owner files stay locked, and clearDeadRecord removes only
// records whose owner is unlocked (or the remover's own), so the record
// of a lease this store holds is its own. Close waits for the unlocks
// under way (mu), and after it unlock removes nothing: once the owner
// files are unlocked another store may have taken the lease over.
func (t *leaseTable) unlock(dir string) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.owners[shard(dir)].Load() == nil {
		return nil
	}
	err := t.unlinkRecord(recordPath(dir))
	if err == nil || errors.Is(err, fs.ErrNotExist) || unwritable(err) {
		return nil
	}
	return err
}

// heldElsewhere reports whether the session folder dir holds a live
// lease record of another holder: its owner file is none of this store's
// and its owner byte is locked. It opens the record read-only and asks
// the kernel who holds the lock (F_OFD_GETLK), so it takes no lock and
// removes nothing; a record whose holder is gone stays for the next lock
// to clear.
func (t *leaseTable) heldElsewhere(dir string) (bool, error) {
	if !leaseRecords {
		return false, nil
	}
	f, err := os.Open(recordPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || t.owns(info) {
		return false, err
	}
	return rangeLocked(f, ownerByte)
}

// owns reports whether info is one of this store's owner files.
func (t *leaseTable) owns(info os.FileInfo) bool {
	for i := range t.owners {
		if owner := t.owners[i].Load(); owner != nil && os.SameFile(info, owner.info) {
			return true
		}
	}
	return false
}

// unlinkRecord removes a lease record with one unlink(2) (os.Remove
// would try rmdir(2) too when it fails), relative to its kept project
// folder when there is one; by path when there is none or that failed.
func (t *leaseTable) unlinkRecord(path string) error {
	kept, err := t.dirs.use(path, func(d sessionfs.Dir) error { return d.Unlink(path) })
	if kept && err == nil {
		return nil
	}
	return unlinkPath(path)
}

// unlinkPath removes the file path with one unlink(2).
func unlinkPath(path string) error {
	for {
		err := syscall.Unlink(path)
		if err != syscall.EINTR {
			if err != nil {
				return &fs.PathError{Op: "unlink", Path: path, Err: err}
			}
			return nil
		}
	}
}

// open returns the store's owner file of slot i, creating and locking it
// the first time; nil without an error when the root cannot hold it
// (missing or not writable: there is nothing to protect yet).
func (t *leaseTable) open(i int) (*leaseOwner, error) {
	if owner := t.owners[i].Load(); owner != nil {
		return owner, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errClosed
	}
	if owner := t.owners[i].Load(); owner != nil {
		return owner, nil
	}
	owner, err := createOwner(t.root)
	if owner == nil || err != nil {
		return nil, err
	}
	t.owners[i].Store(owner)
	return owner, nil
}

// createOwner creates a new owner file in root under a random token and
// locks its owner byte.
func createOwner(root string) (*leaseOwner, error) {
	token := make([]byte, 12)
	_, _ = rand.Read(token)
	path := filepath.Join(root, logpath.OwnerFileName(hex.EncodeToString(token)))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist), unwritable(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	info, err := f.Stat()
	if err == nil {
		var ok bool
		if ok, err = lockRange(f, ownerByte); err == nil && !ok {
			err = errors.New("session: a new owner file is locked already: " + path)
		}
	}
	if err != nil {
		return nil, errors.Join(err, f.Close(), os.Remove(path))
	}
	return &leaseOwner{file: f, path: path, info: info}, nil
}

// unwritable reports an error of a file system this process may not write.
func unwritable(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// close removes the owner files and closes them, which drops their
// locks: the records of leases still held are then seen as left behind.
func (t *leaseTable) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	var errs []error
	for i := range t.owners {
		owner := t.owners[i].Swap(nil)
		if owner == nil {
			continue
		}
		err := os.Remove(owner.path)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		errs = append(errs, err, owner.file.Close())
	}
	return errors.Join(errs...)
}

// Acquire takes the lease of the stored session id for this store: a
// record in its folder (see leaseTable), refused with fault.LeaseHeld
// while another process, another store over the root or this store holds
// it. Epochs count up per session within this store; across processes the
// record and its owner's lock are what exclude.
func (s *JSONL) Acquire(ctx context.Context, id string) (Epoch, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	st, err := s.state(id)
	if err != nil {
		return 0, err
	}
	st.op.Lock()
	defer st.op.Unlock()
	dir, err := s.folder(ctx, st)
	if err != nil {
		return 0, err
	}
	if st.leased {
		return 0, durable.LeaseHeld(id, "this store")
	}
	ok, err := s.leases.lock(dir)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, durable.LeaseHeld(id, "another process (or another store over this root)")
	}
	st.epoch++
	st.leased, st.leaseDir = true, dir
	return st.epoch, nil
}

// HeldElsewhere reports whether another process, or another store over
// this root, holds the lease of the stored session id now. It neither
// takes nor disturbs the lease: a record left by a holder that is gone
// stays until an Acquire clears it. An unknown id is held by no one; a
// lease this store holds is not elsewhere. It blocks on the file system.
func (s *JSONL) HeldElsewhere(ctx context.Context, id string) (bool, error) {
	if err := s.checkOpen(); err != nil {
		return false, err
	}
	path, err := s.find(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return s.leases.heldElsewhere(filepath.Dir(path))
}

// folder returns the folder of the stored session (st.op held): where its
// ready log lies, else where find locates it.
func (s *JSONL) folder(ctx context.Context, st *logState) (string, error) {
	st.mu.Lock()
	path := st.path
	if !st.loaded {
		path = ""
	}
	st.mu.Unlock()
	if path == "" {
		var err error
		if path, err = s.find(ctx, st.id); err != nil {
			return "", err
		}
	}
	return filepath.Dir(path), nil
}

// AppendFenced is Append under epoch: the lease is checked when the batch
// is queued, and Release waits for every batch queued under its epoch, so
// nothing is written once the lease is gone.
func (s *JSONL) AppendFenced(ctx context.Context, id string, epoch Epoch, events []Event) error {
	if epoch == 0 {
		return fencedError(id, epoch)
	}
	return s.appendUnder(ctx, id, epoch, events)
}

// Release waits for the writes queued under epoch, then unlocks the
// session's lease. The lease is given up even when the wait reports a
// failed log; that error is returned.
func (s *JSONL) Release(ctx context.Context, id string, epoch Epoch) error {
	st := s.existingState(id)
	if st == nil {
		return nil
	}
	return s.releaseLease(st, epoch)
}

// releaseLease is Release of the log st.
func (s *JSONL) releaseLease(st *logState, epoch Epoch) error {
	st.op.Lock()
	defer st.op.Unlock()
	if !st.leased || st.epoch != epoch {
		return nil
	}
	st.leased = false
	err := st.quiesce()
	return errors.Join(err, s.leases.unlock(st.leaseDir))
}

// Renew has nothing to do: a JSONL lease lasts until it is released or
// the process ends.
func (s *JSONL) Renew(context.Context) ([]string, error) { return nil, s.checkOpen() }

// checkLease refuses a batch queued under an epoch that is not the
// current lease (st.op held); epoch 0 is an unfenced append.
func (st *logState) checkLease(epoch Epoch) error {
	if epoch == 0 || st.leased && st.epoch == epoch {
		return nil
	}
	return fencedError(st.id, epoch)
}

// holdForRepair makes sure no other process holds id's lease while a Load
// repairs the log (st.op held): when this store does not hold it, it
// takes the lease record for the repair and returns the function that
// gives it back.
func (s *JSONL) holdForRepair(ctx context.Context, st *logState) (done func(), err error) {
	if st.leased {
		return func() {}, nil
	}
	dir, err := s.folder(ctx, st)
	if err != nil {
		return nil, err
	}
	ok, err := s.leases.lock(dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, durable.LeaseHeld(st.id, "another process (or another store over this root); it is not repaired here")
	}
	return func() { _ = s.leases.unlock(dir) }, nil
}
