package session

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// logState is the in-process state of one log: where it is, how long it
// is, and its group-commit queue. A writer goroutine exists only while the
// queue has work.
type logState struct {
	store *JSONL // the store holding this log
	id    string
	op    sync.Mutex // serializes Create/Load with the enqueue step of Append

	mu      sync.Mutex
	path    string
	loaded  bool
	next    int64 // seq of the next event to enqueue
	size    int64 // durable file size
	queue   []*batch
	writing bool
	retired chan struct{} // made by a waiter while writing; closed when the writer retires
	failed  error         // the first write or sync failure, until a Load re-establishes the log

	epoch    Epoch  // the last lease Acquire gave out (op held)
	leased   bool   // epoch is held (op held)
	leaseDir string // the folder holding the lease record while leased (op held)

	file     sessionfs.File // kept open between writer rounds while slot is held
	slot     bool           // holds one of the store's kept-file slots
	released bool           // releaseLog since the last Create or Load
	// evictable: released with its file kept, queued in the slots'
	// released list (read there without mu).
	evictable atomic.Bool
}

// batch is one Append's encoded lines, or a flush barrier (no data).
type batch struct {
	data []byte
	done chan error
}

func (s *JSONL) isClosed() bool { return s.writers.isClosed() }

func (s *JSONL) checkOpen() error {
	if s.isClosed() {
		return errClosed
	}
	return nil
}

// state returns the state of id, creating an empty one.
func (s *JSONL) state(id string) (*logState, error) {
	if s.isClosed() {
		return nil, errClosed
	}
	if st := s.existingState(id); st != nil {
		return st, nil
	}
	v, _ := s.logs.LoadOrStore(id, &logState{store: s, id: id})
	return v.(*logState), nil
}

func (s *JSONL) existingState(id string) *logState {
	if v, ok := s.logs.Load(id); ok {
		return v.(*logState)
	}
	return nil
}

func (st *logState) ready(path string, next, size int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.path, st.loaded, st.next, st.size = path, true, next, size
	st.released = false
	st.evictable.Store(false)
}

func (st *logState) isReady() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.loaded
}

// fail records the first failure; every later append is refused.
func (st *logState) fail(err error) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failed == nil {
		st.failed = err
	}
	return logFailed(st.id, err)
}

// awaitRetired waits until no writer runs for this log (the caller holds
// op, and the log failed, so none can start).
func (st *logState) awaitRetired() {
	st.mu.Lock()
	for st.writing {
		if st.retired == nil {
			st.retired = make(chan struct{})
		}
		retired := st.retired
		st.mu.Unlock()
		<-retired
		st.mu.Lock()
	}
	st.mu.Unlock()
}

// reestablish clears the failure of a failed log (the caller holds op)
// once its writer has retired: the file is cut back to its last
// acknowledged size and synced, as the failed batch's rollback did (and
// perhaps failed to), so the read that follows sees only what was
// acknowledged. Nothing needs room on the disk. When that fails the log
// stays failed.
func (s *JSONL) reestablish(st *logState) error {
	st.mu.Lock()
	failed, loaded, path, size := st.failed, st.loaded, st.path, st.size
	st.mu.Unlock()
	if failed == nil {
		return nil
	}
	st.awaitRetired()
	if loaded {
		if err := s.truncateTo(path, size); err != nil {
			return logFailed(st.id, errors.Join(failed, err))
		}
	}
	st.mu.Lock()
	st.failed = nil
	st.mu.Unlock()
	return nil
}

// truncateTo cuts the file at path to size and syncs it.
func (s *JSONL) truncateTo(path string, size int64) error {
	f, err := s.fs.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return truncateDurably(f, size)
}

// quiesce waits until no batch of this log is queued or being written (the
// caller holds op, so none can be added) and reports a failed log.
func (st *logState) quiesce() error {
	b, err := st.barrier()
	if err != nil || b == nil {
		return err
	}
	return <-b.done
}

// barrier enqueues an empty batch behind every queued one, or returns nil
// when nothing is in flight.
func (st *logState) barrier() (*batch, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failed != nil {
		return nil, logFailed(st.id, st.failed)
	}
	if !st.writing {
		return nil, nil
	}
	b := &batch{done: make(chan error, 1)}
	st.queue = append(st.queue, b)
	return b, nil
}

// Append checks that events continue the log of id, queues their encoded
// lines for the log's writer and blocks until the batch they joined is
// written and fdatasynced (group commit: appends that arrive while a batch
// is being synced form the next batch). A log not yet created or loaded in
// this process is first adopted with a repairing Load. If ctx ends first,
// Append returns ctx.Err() but the events stay queued and will be written.
// An empty batch is a no-op.
func (s *JSONL) Append(ctx context.Context, id string, events []Event) error {
	return s.appendUnder(ctx, id, 0, events)
}

// appendUnder is Append under epoch (0: unfenced).
func (s *JSONL) appendUnder(ctx context.Context, id string, epoch Epoch, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encodeBatch(id, events[0].Seq, events, nil)
	if err != nil {
		return err
	}
	st, err := s.state(id)
	if err != nil {
		return err
	}
	return s.appendEncoded(ctx, st, events, data, epoch)
}

// appendEncoded is Append of events encoded as data to the log st, under
// epoch (0: unfenced).
func (s *JSONL) appendEncoded(ctx context.Context, st *logState, events []Event, data []byte, epoch Epoch) error {
	// An append that cannot be cancelled waits for its batch anyway, so
	// when no writer is running it writes its batch itself instead of
	// starting a writer goroutine and waiting for it.
	inline := ctx.Done() == nil
	b, own, err := s.enqueueWith(ctx, st, events, data, inline, epoch)
	if err != nil {
		return err
	}
	if own != nil {
		return s.writeInline(own, data)
	}
	select {
	case err := <-b.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueueWith queues the batch. When no writer is running it starts one,
// or, with inline, makes the caller the writer: own is then the log,
// marked writing, nothing is queued (b is nil) and the caller must write
// data with writeInline(own, data).
func (s *JSONL) enqueueWith(ctx context.Context, st *logState, events []Event, data []byte, inline bool, epoch Epoch) (b *batch, own *logState, err error) {
	id := st.id
	st.op.Lock()
	defer st.op.Unlock()
	if err := st.checkLease(epoch); err != nil {
		return nil, nil, err
	}
	if !st.isReady() {
		if _, err := s.loadLocked(ctx, st); err != nil {
			return nil, nil, err
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failed != nil {
		return nil, nil, logFailed(id, st.failed)
	}
	if events[0].Seq != st.next {
		_, err := encodeBatch(id, st.next, events, nil)
		return nil, nil, err
	}
	if !st.writing {
		if err := s.startWriter(st, !inline); err != nil {
			return nil, nil, err
		}
		if inline {
			st.next += int64(len(events))
			return nil, st, nil
		}
	}
	b = &batch{data: data, done: make(chan error, 1)}
	st.queue = append(st.queue, b)
	st.next += int64(len(events))
	return b, nil, nil
}

// startWriter marks st writing and, with spawn, starts its writer
// goroutine; without, the caller is the writer (st.mu held).
func (s *JSONL) startWriter(st *logState, spawn bool) error {
	if !s.writers.enter() {
		return errClosed
	}
	st.writing = true
	if spawn {
		go s.runWriter(&groupWriter{s: s, st: st})
	}
	return nil
}

// writeInline is one writer round run by the appender that found no
// writer running: it writes the appender's own data, then retires like a
// writer whose queue is empty, or hands the batches queued meanwhile to a
// writer goroutine. It returns the outcome of its own write.
func (s *JSONL) writeInline(st *logState, data []byte) error {
	w := groupWriter{s: s, st: st}
	err := w.commitData(data)
	if w.idle() {
		s.writers.leave()
		return err
	}
	go s.runWriter(&groupWriter{s: s, st: st, file: w.file, ticket: w.ticket})
	return err
}

// idle reports true when nothing is queued, and then retires the writer
// as take does.
func (w *groupWriter) idle() bool {
	w.st.mu.Lock()
	if len(w.st.queue) > 0 {
		w.st.mu.Unlock()
		return false
	}
	w.retireLocked()
	return true
}

// retireLocked ends the writer's run (st.mu held, which it releases): the
// log is no longer writing, and the writer's file is kept for the next
// round or closed.
func (w *groupWriter) retireLocked() {
	w.st.writing = false
	if w.st.retired != nil {
		close(w.st.retired)
		w.st.retired = nil
	}
	f := w.s.keepLocked(w.st, w.file)
	w.file = nil
	w.st.mu.Unlock()
	closeQuietly(f)
	w.returnTicket()
}

func (w *groupWriter) answer(batches []*batch, err error) {
	for _, b := range batches {
		b.done <- err
	}
}

// runWriter drains the queue of st: each round takes every queued batch,
// writes them with one write and one fdatasync, and answers them all. It
// exits (closing the file) as soon as the queue is empty.
func (s *JSONL) runWriter(w *groupWriter) {
	defer s.writers.leave()
	for {
		batches, ok := w.take()
		if !ok {
			return
		}
		w.answer(batches, w.commit(batches))
		w.awaitRefill(len(batches))
	}
}

// awaitRefill yields the processor while the n appenders just answered
// are still queueing their next events behind the ones already waiting,
// so that the next sync covers every active appender instead of
// alternating between two half batches. It stops once they are all back
// or after idleYields yields in a row bring nobody; a lone appender
// (n == 1) never waits. No timer is involved.
func (w *groupWriter) awaitRefill(n int) {
	if n > 1 {
		awaitGrowth(w.queued, n+w.queued())
	}
}

// idleYields bounds how long awaitGrowth waits for an appender that may
// not come back.
const idleYields = 32

// awaitGrowth yields while count() is below target and still growing.
func awaitGrowth(count func() int, target int) {
	last, idle := count(), 0
	for last < target && idle < idleYields {
		runtime.Gosched()
		if now := count(); now > last {
			last, idle = now, 0
		} else {
			idle++
		}
	}
}

func (w *groupWriter) queued() int {
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	return len(w.st.queue)
}

type groupWriter struct {
	s      *JSONL
	st     *logState
	file   sessionfs.File
	ticket bool   // holds one of the process's open tickets (see openTickets)
	buf    []byte // the lines of one round's batches
	frame  []byte // the same as one Zstandard frame
}

// take removes every queued batch; false (and the writer retired) when
// none.
func (w *groupWriter) take() ([]*batch, bool) {
	st := w.st
	st.mu.Lock()
	batches := st.queue
	st.queue = nil
	if len(batches) == 0 {
		w.retireLocked()
		return nil, false
	}
	st.mu.Unlock()
	return batches, true
}

// commit writes the batches as one durable append; on failure the file is
// rolled back to its previous size and the log enters the failed state.
func (w *groupWriter) commit(batches []*batch) error {
	w.buf = w.buf[:0]
	for _, b := range batches {
		w.buf = append(w.buf, b.data...)
	}
	return w.commitData(w.buf)
}

// commitData is commit of the lines in data.
func (w *groupWriter) commitData(data []byte) error {
	st := w.st
	st.mu.Lock()
	failed, size, path := st.failed, st.size, st.path
	st.mu.Unlock()
	if failed != nil {
		return logFailed(st.id, failed)
	}
	if len(data) == 0 {
		return nil
	}
	if err := w.open(path); err != nil {
		return st.fail(err)
	}
	if w.s.compression == CompressionZstd {
		w.frame = appendFrame(w.frame[:0], data)
		data = w.frame
	}
	if err := appendDurably(w.file, size, data); err != nil {
		return st.fail(err)
	}
	st.mu.Lock()
	st.size += int64(len(data))
	st.mu.Unlock()
	return nil
}

// open makes sure the writer has the log's file: the kept one, or a
// fresh descriptor, opened under one of the store's open tickets (it
// waits for one while as many writers hold a file outside the kept
// slots). When the process is out of descriptors even so, the kept files
// of other logs are closed and the open retried once.
func (w *groupWriter) open(path string) error {
	if w.file == nil {
		w.file = w.st.takeFile()
	}
	if w.file != nil {
		return nil
	}
	if !w.ticket {
		w.s.tickets.take()
		w.ticket = true
	}
	f, err := w.s.openLog(path)
	if outOfFiles(err) {
		w.s.shedKept()
		f, err = w.s.openLog(path)
	}
	if err != nil {
		w.returnTicket()
	}
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(w.st.id)
	}
	w.file = f
	return err
}

// openLog opens the log at path for appending: relative to its kept
// project folder when there is one (see projectDirs), by path when there
// is none or that failed.
func (s *JSONL) openLog(path string) (sessionfs.File, error) {
	const flag = os.O_WRONLY | os.O_APPEND
	var f sessionfs.File
	kept, err := s.dirs.use(path, func(d sessionfs.Dir) (err error) {
		f, err = d.OpenFile(path, flag, 0)
		return err
	})
	if kept && err == nil {
		return f, nil
	}
	f, perr := s.fs.OpenFile(path, flag, 0)
	if kept && perr == nil {
		s.dirs.forget(path)
	}
	return f, perr
}

// returnTicket gives the writer's open ticket back, if it holds one.
func (w *groupWriter) returnTicket() {
	if w.ticket {
		w.ticket = false
		w.s.tickets.give()
	}
}

// Flush blocks until every Append of id accepted so far is durable and
// reports true. A log with nothing in flight reports true at once if it
// exists; an unknown id is ErrNotFound; a failed log is ErrLogFailed.
func (s *JSONL) Flush(ctx context.Context, id string) (bool, error) {
	if err := s.checkOpen(); err != nil {
		return false, err
	}
	st := s.existingState(id)
	if st == nil || !st.isReady() {
		if _, err := s.find(ctx, id); err != nil {
			return false, err
		}
		return true, nil
	}
	b, err := st.barrier()
	if err != nil || b == nil {
		return err == nil, err
	}
	select {
	case err := <-b.done:
		return err == nil, err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Close refuses new operations, then blocks until every queued append is
// written (or has failed) and every writer goroutine has exited. It is
// idempotent.
func (s *JSONL) Close() error {
	s.writers.close()
	s.closeKept()
	err := s.leases.close()
	return errors.Join(err, s.dirs.close())
}
