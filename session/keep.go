package session

import (
	"errors"
	"sync"
	"syscall"
)

// WithKeptFiles sets how many logs may keep their file open between
// writes: an appending log takes one of n slots the first time it writes
// (or when it is created) and keeps its file until ReleaseLog, a write
// failure or Close, so later batches skip open(2) and close(2). Logs that
// find no free slot reopen their file for every batch, as with n = 0. The
// default is half the process's open-file limit.
func WithKeptFiles(n int) Option { return func(s *JSONL) { s.kept.max = max(n, 0) } }

// fileSlots bounds how many logs keep an open file.
type fileSlots struct {
	mu   sync.Mutex
	max  int
	used int
}

func (b *fileSlots) acquire() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used >= b.max {
		return false
	}
	b.used++
	return true
}

func (b *fileSlots) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used--
}

// keepLocked parks f as st's open file for the next writer round when st
// holds or can take a slot and the log is neither failed nor released nor
// the store closed; otherwise it frees st's slot and returns f for the
// caller to close (st.mu held).
func (s *JSONL) keepLocked(st *logState, f File) (toClose File) {
	if f == nil {
		return nil
	}
	if st.failed != nil || st.released || st.file != nil || s.isClosed() {
		if st.slot && st.file == nil {
			st.slot = false
			s.kept.release()
		}
		return f
	}
	if !st.slot && !s.kept.acquire() {
		return f
	}
	st.slot, st.file = true, f
	return nil
}

// keep is keepLocked taking st.mu, closing f when it is not kept.
func (s *JSONL) keep(st *logState, f File) {
	st.mu.Lock()
	toClose := s.keepLocked(st, f)
	st.mu.Unlock()
	closeQuietly(toClose)
}

// takeFile hands st's kept file, if any, to its writer; the slot stays
// held until the file is dropped.
func (st *logState) takeFile() File {
	st.mu.Lock()
	defer st.mu.Unlock()
	f := st.file
	st.file = nil
	return f
}

// dropFileLocked detaches st's kept file and frees its slot when no writer
// holds the file; the caller closes the result (st.mu held).
func (s *JSONL) dropFileLocked(st *logState) File {
	if st.writing || !st.slot {
		return nil
	}
	f := st.file
	st.file, st.slot = nil, false
	s.kept.release()
	return f
}

// ReleaseLog tells the store that id will not be appended to for a while
// (its live session ended): its kept file is closed now, or by its writer
// when one is running, and its slot freed for other logs. A later Create
// or Load of id may keep a file again. An unknown id is a no-op.
func (s *JSONL) ReleaseLog(id string) {
	st := s.existingState(id)
	if st == nil {
		return
	}
	st.mu.Lock()
	st.released = true
	f := s.dropFileLocked(st)
	st.mu.Unlock()
	closeQuietly(f)
}

// shedKept answers open(2) running out of descriptors: the budget is
// halved and every kept file not held by a writer is closed.
func (s *JSONL) shedKept() {
	s.kept.mu.Lock()
	s.kept.max = s.kept.used / 2
	s.kept.mu.Unlock()
	s.closeKept()
}

// closeKept closes every kept file not held by a writer (all of them once
// the writers are gone) and frees their slots.
func (s *JSONL) closeKept() {
	s.mu.Lock()
	states := make([]*logState, 0, len(s.logs))
	for _, st := range s.logs {
		states = append(states, st)
	}
	s.mu.Unlock()
	for _, st := range states {
		st.mu.Lock()
		f := s.dropFileLocked(st)
		st.mu.Unlock()
		closeQuietly(f)
	}
}

// outOfFiles reports whether err is the process's or the system's open-file
// limit.
func outOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

func closeQuietly(f File) {
	if f != nil {
		f.Close() //nolint:errcheck // every write was synced; nothing is lost on close
	}
}
