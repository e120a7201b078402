package session

import (
	"errors"
	"slices"
	"sync"
	"syscall"

	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// withKeptFiles sets how many logs may keep their file open between
// writes: an appending log takes one of n slots the first time it writes
// (or when it is created) and keeps its file, so later batches skip
// open(2) and close(2), until a write failure or Close. A released log
// (releaseLog) keeps its file too, but gives up its slot, closing the
// file, when another log needs one and none is free. Logs that find no
// slot reopen their file for every batch, as with n = 0. The default is
// one budget shared by every store of the process that sets none: the
// open-file limit less a reserve of a quarter of it (at least 1,024) for
// the rest of the process.
func withKeptFiles(n int) Option { return func(s *JSONL) { s.kept = &fileSlots{max: max(n, 0)} } }

// openTickets bounds how many writers of the process hold a log's file
// open outside the kept slots at once (defaultOpenFiles), for the stores
// without their own (withOpenFiles): when thousands
// of logs without a slot are written together (every turn cancelled by a
// Close), the rest wait for a ticket instead of running the process out
// of descriptors, each shortage costing a pass over every log
// (shedKept).
//
// The bound is a mutex and a condition, not a channel: it serves every
// store of the process, and a channel made inside a synctest bubble by
// the first store to write could not be used by any store outside it.
var openTickets = sync.OnceValue(func() *openBound { return newOpenBound(defaultOpenFiles()) })

// withOpenFiles gives a store its own bound on the files its writers hold
// open outside the kept slots at once.
func withOpenFiles(n int) Option {
	return func(s *JSONL) { s.tickets = newOpenBound(n) }
}

// openBound is a counting semaphore of open-file tickets.
type openBound struct {
	mu   sync.Mutex
	free sync.Cond // signalled when a ticket is given back
	max  int
	used int
}

func newOpenBound(n int) *openBound {
	b := &openBound{max: max(n, 1)}
	b.free.L = &b.mu
	return b
}

// take blocks until a ticket is free and takes it.
func (b *openBound) take() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used >= b.max {
		b.free.Wait()
	}
	b.used++
}

// give returns a ticket take took. It does not block.
func (b *openBound) give() {
	b.mu.Lock()
	b.used--
	b.mu.Unlock()
	b.free.Signal()
}

// processSlots is the kept-file budget of the stores without their own.
var processSlots = sync.OnceValue(func() *fileSlots { return &fileSlots{max: defaultKeptFiles()} })

// fileSlots bounds how many logs keep an open file.
type fileSlots struct {
	mu       sync.Mutex
	max      int
	used     int
	released []*logState // released logs keeping their file, oldest first; entries may be stale
}

// acquire takes a slot for a log: a free one, else the slot of the oldest
// released log whose file is idle, whose file it returns to be closed.
// The caller holds its own log's mu; a victim that is locked is skipped.
func (b *fileSlots) acquire() (ok bool, evicted sessionfs.File) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used < b.max {
		b.used++
		return true, nil
	}
	for n := len(b.released); n > 0; n-- {
		v := b.released[0]
		b.released[0] = nil
		b.released = b.released[1:]
		if !v.evictable.Load() {
			continue
		}
		if !v.mu.TryLock() {
			b.released = append(b.released, v)
			continue
		}
		f := v.evictLocked()
		v.mu.Unlock()
		if f != nil {
			return true, f
		}
	}
	return false, nil
}

// evictLocked gives up a released log's idle kept file and its slot (which
// passes to the evicting log); nil when it has none to give (v.mu held).
func (v *logState) evictLocked() sessionfs.File {
	v.evictable.Store(false)
	if !v.released || !v.slot || v.file == nil || v.writing {
		return nil
	}
	f := v.file
	v.file, v.slot = nil, false
	return f
}

// addReleased queues st's kept file for eviction (st.mu held) unless it is
// queued already, pruning the queue of stale entries when they outnumber
// the budget.
func (b *fileSlots) addReleased(st *logState) {
	if !st.evictable.CompareAndSwap(false, true) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.released = append(b.released, st)
	if len(b.released) > 2*max(b.max, 64) {
		b.released = slices.DeleteFunc(b.released, func(v *logState) bool { return !v.evictable.Load() })
	}
}

func (b *fileSlots) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used--
}

// shrink halves the budget to what is in use (after running out of
// descriptors).
func (b *fileSlots) shrink() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.max = b.used / 2
}

// keepLocked parks f as st's open file for the next writer round when st
// holds or can take a slot and the log is not failed (a released log only
// keeps a slot it holds, and its file becomes evictable); otherwise it
// frees st's slot and returns f for the caller to close (st.mu held).
func (s *JSONL) keepLocked(st *logState, f sessionfs.File) (toClose sessionfs.File) {
	if f == nil {
		return nil
	}
	if st.failed != nil || st.file != nil || (st.released && !st.slot) {
		if st.slot && st.file == nil {
			st.slot = false
			s.kept.release()
		}
		return f
	}
	if !st.slot {
		ok, evicted := s.kept.acquire()
		closeQuietly(evicted)
		if !ok {
			return f
		}
	}
	st.slot, st.file = true, f
	if st.released {
		s.kept.addReleased(st)
	}
	return nil
}

// keep is keepLocked for a file opened outside a writer (Create's), taking
// st.mu; f is closed instead when it is not kept or the store has closed
// (Close waits for writers, whose kept files it then closes, but not for
// a Create). A retiring writer needs no such check: Close waits for it.
func (s *JSONL) keep(st *logState, f sessionfs.File) {
	st.mu.Lock()
	toClose := f
	if !s.isClosed() { // under st.mu: a Close that follows finds the file kept
		toClose = s.keepLocked(st, f)
	}
	st.mu.Unlock()
	closeQuietly(toClose)
}

// takeFile hands st's kept file, if any, to its writer; the slot stays
// held until the file is dropped.
func (st *logState) takeFile() sessionfs.File {
	st.mu.Lock()
	defer st.mu.Unlock()
	f := st.file
	st.file = nil
	return f
}

// dropFile closes st's kept file, if no writer holds it, and frees its
// slot.
func (s *JSONL) dropFile(st *logState) {
	st.mu.Lock()
	f := s.dropFileLocked(st)
	st.mu.Unlock()
	closeQuietly(f)
}

// dropFileLocked detaches st's kept file and frees its slot when no writer
// holds the file; the caller closes the result (st.mu held).
func (s *JSONL) dropFileLocked(st *logState) sessionfs.File {
	if st.writing || !st.slot {
		return nil
	}
	st.evictable.Store(false)
	f := st.file
	st.file, st.slot = nil, false
	s.kept.release()
	return f
}

// releaseLog tells the store that id will not be appended to for a while
// (its live session ended). Its kept file stays open, so that a resumed
// session appends without reopening it, but its slot goes to the next log
// that finds none free (the file is closed then) or it is closed by
// Close. A Create or Load of id makes it a log like any other again. An
// unknown id is a no-op; it never blocks on I/O.
func (s *JSONL) releaseLog(id string) {
	if st := s.existingState(id); st != nil {
		s.releaseState(st)
	}
}

func (s *JSONL) releaseState(st *logState) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.released {
		return
	}
	st.released = true
	if st.slot && st.file != nil && !st.writing {
		s.kept.addReleased(st)
	}
}

// shedKept answers open(2) running out of descriptors: the budget is cut
// to half the slots in use and every kept file of this store not held by
// a writer is closed.
func (s *JSONL) shedKept() {
	s.kept.shrink()
	s.closeKept()
}

// closeKept closes every kept file not held by a writer (all of them once
// the writers are gone) and frees their slots.
func (s *JSONL) closeKept() {
	s.logs.Range(func(_, v any) bool {
		s.dropFile(v.(*logState))
		return true
	})
}

// outOfFiles reports whether err is the process's or the system's open-file
// limit.
func outOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

func closeQuietly(f sessionfs.File) {
	if f != nil {
		f.Close() //nolint:errcheck // every write was synced; nothing is lost on close
	}
}
