// Package faultfs is a test harness: a file system for the JSONL store
// (session.WithFS) that injects write and sync failures and holds syncs.
package faultfs

import (
	"io/fs"
	"sync"
	"syscall"

	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// FS wraps a sessionfs.FS and injects failures into the files it opens for
// writing, or holds their syncs, for tests of the durability contract. Its
// zero value is not usable; call New. Methods are safe for
// concurrent use.
type FS struct {
	sessionfs.FS

	mu         sync.Mutex
	syncs      int           // data syncs seen so far
	failSyncAt int           // fail the sync with this 1-based number (0: never)
	syncErr    error         // error for that sync
	shortWrite bool          // the next write writes half, then fails with ENOSPC
	full       bool          // every write fails with ENOSPC, writing nothing
	fillIn     int           // writes left before the disk is full (0: not filling)
	gate       chan struct{} // non-nil while syncs are held
	held       chan struct{} // told of each sync that starts waiting at the gate
}

// New wraps base (nil means the real file system, sessionfs.OSFS).
func New(base sessionfs.FS) *FS {
	if base == nil {
		base = sessionfs.OSFS{}
	}
	return &FS{FS: base}
}

// FailSync makes the nth data sync from now (1 = the next one) fail with
// err (EIO when nil). Directory syncs are not counted.
func (f *FS) FailSync(n int, err error) {
	if err == nil {
		err = syscall.EIO
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failSyncAt, f.syncErr = f.syncs+n, err
}

// ShortWriteThenENOSPC makes the next write to a file write only the first
// half of its bytes and then fail with ENOSPC, as a full disk does.
func (f *FS) ShortWriteThenENOSPC() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shortWrite = true
}

// SetFull makes the file system full (every write to a file writes nothing
// and fails with ENOSPC, as a full disk does) or gives it room again.
func (f *FS) SetFull(full bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.full, f.fillIn = full, 0
}

// FillAfter lets the next n writes through and makes the file system full
// after them (see SetFull), as a disk filling up does.
func (f *FS) FillAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fillIn = n
	f.full = n <= 0
}

// HoldSyncs makes every data sync from now wait until ReleaseSyncs, and
// returns a channel that receives when a sync starts waiting (at most one
// notice is buffered).
func (f *FS) HoldSyncs() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate == nil {
		f.gate, f.held = make(chan struct{}), make(chan struct{}, 1)
	}
	return f.held
}

// ReleaseSyncs lets the held syncs and every later one through. It is a
// no-op when nothing is held, so a failed test can call it on its way out.
func (f *FS) ReleaseSyncs() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
}

// awaitGate blocks a sync while syncs are held.
func (f *FS) awaitGate() {
	f.mu.Lock()
	gate, held := f.gate, f.held
	f.mu.Unlock()
	if gate == nil {
		return
	}
	select {
	case held <- struct{}{}:
	default:
	}
	<-gate
}

// Syncs returns how many data syncs have been made through f.
func (f *FS) Syncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncs
}

// OpenFile opens the file through the wrapped FS and injects faults into it.
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (sessionfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

type faultFile struct {
	sessionfs.File
	fs   *FS
	name string
}

func (f *faultFile) Write(p []byte) (int, error) {
	full, short := f.fs.takeWriteFault()
	switch {
	case full:
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	case !short:
		return f.File.Write(p)
	}
	n, err := f.File.Write(p[:len(p)/2])
	if err == nil {
		err = &fs.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	return n, err
}

func (f *faultFile) Sync() error {
	f.fs.awaitGate()
	if err := f.fs.countSync(); err != nil {
		return &fs.PathError{Op: "fdatasync", Path: f.name, Err: err}
	}
	return f.File.Sync()
}

// takeWriteFault reports whether the disk is full, else whether this write
// is the short one (which it consumes).
func (f *FS) takeWriteFault() (full, short bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fillIn > 0 {
		f.fillIn--
		f.full = f.fillIn == 0
		return false, false
	}
	if f.full {
		return true, false
	}
	short = f.shortWrite
	f.shortWrite = false
	return false, short
}

// countSync counts a sync and returns the injected error for it, if any.
func (f *FS) countSync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	if f.syncs == f.failSyncAt {
		return f.syncErr
	}
	return nil
}
