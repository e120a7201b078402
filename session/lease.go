package session

import (
	"context"
	"errors"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// leaseTable is a JSONL store's handle on its root's lease file, opened
// on first use.
type leaseTable struct {
	root string

	mu     sync.Mutex
	file   *os.File
	closed bool
}

// offset is the byte of the lease file that stands for id.
func leaseOffset(id string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return int64(h.Sum64() & (1<<62 - 1))
}

// lock takes id's lease lock without waiting: false when another process
// (or another store over this root) holds it. A root this process cannot
// write (or that does not exist yet) has nothing to protect: lock
// succeeds without a lock.
func (t *leaseTable) lock(id string) (bool, error) {
	f, err := t.open()
	if f == nil || err != nil {
		return err == nil, err
	}
	return lockRange(f, leaseOffset(id))
}

// unlock gives id's lease lock up.
func (t *leaseTable) unlock(id string) error {
	t.mu.Lock()
	f := t.file
	t.mu.Unlock()
	if f == nil {
		return nil
	}
	return unlockRange(f, leaseOffset(id))
}

func (t *leaseTable) open() (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errClosed
	}
	if t.file != nil {
		return t.file, nil
	}
	f, err := os.OpenFile(filepath.Join(t.root, logpath.LeaseFileName), os.O_RDWR|os.O_CREATE, 0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return nil, nil
	case err != nil:
		return nil, err
	}
	t.file = f
	return f, nil
}

// close drops every lock this store holds.
func (t *leaseTable) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.file == nil {
		return nil
	}
	err := t.file.Close()
	t.file = nil
	return err
}

// Acquire takes the lease of the stored session id for this store: the
// lock of its byte in the root's lease file (logpath.LeaseFileName), refused
// with fault.LeaseHeld while another process, another store over the
// root or this store holds it. Epochs count up per session within this
// store; across processes the lock is what excludes.
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
	if !st.isReady() {
		if _, err := s.find(ctx, id); err != nil {
			return 0, err
		}
	}
	if st.leased {
		return 0, durable.LeaseHeld(id, "this store")
	}
	ok, err := s.leases.lock(id)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, durable.LeaseHeld(id, "another process (or another store over this root)")
	}
	st.epoch++
	st.leased = true
	return st.epoch, nil
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
	st.op.Lock()
	defer st.op.Unlock()
	if !st.leased || st.epoch != epoch {
		return nil
	}
	st.leased = false
	err := st.quiesce()
	return errors.Join(err, s.leases.unlock(id))
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
// takes the lock for the repair and returns the function that gives it
// back.
func (s *JSONL) holdForRepair(st *logState) (done func(), err error) {
	if st.leased {
		return func() {}, nil
	}
	ok, err := s.leases.lock(st.id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, durable.LeaseHeld(st.id, "another process (or another store over this root); it is not repaired here")
	}
	return func() { _ = s.leases.unlock(st.id) }, nil
}
