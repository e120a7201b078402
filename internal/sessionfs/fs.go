// Package sessionfs is the file-system seam of session's JSONL store: the
// FS and File interfaces it writes through and OSFS (the real file system,
// syncing data with fdatasync where the platform has it). The module's
// tests install another with session.WithFS (the internal/faultfs
// harness) to inject write and sync failures or to hold syncs.
package sessionfs

import (
	"io/fs"
	"os"
)

// FS is the file-system seam of the JSONL store. OSFS is the real one;
// tests wrap it to inject write and sync failures.
type FS interface {
	// OpenFile opens a file like os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// ReadFile reads a whole file like os.ReadFile.
	ReadFile(name string) ([]byte, error)
	// ReadDir lists a directory like os.ReadDir.
	ReadDir(name string) ([]fs.DirEntry, error)
	// Stat is os.Stat.
	Stat(name string) (fs.FileInfo, error)
	// Mkdir is os.Mkdir.
	Mkdir(name string, perm fs.FileMode) error
	// Link creates newname as a hard link to oldname; it never replaces an
	// existing newname.
	Link(oldname, newname string) error
	// Remove is os.Remove.
	Remove(name string) error
	// SyncDir makes a directory's entries durable (fsync on the directory).
	SyncDir(name string) error
}

// File is an open log file. Sync must make the written data durable
// (fdatasync on Linux); it blocks until the device confirms.
type File interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
	Close() error
}

// OSFS is the real file system.
type OSFS struct{}

// OpenFile opens name as os.OpenFile does (on unix without registering
// the file with the runtime poller, see openFile).
func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return openFile(name, flag, perm)
}

// ReadFile is os.ReadFile.
func (OSFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// ReadDir is os.ReadDir.
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// Stat is os.Stat.
func (OSFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Mkdir is os.Mkdir.
func (OSFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }

// Link is os.Link (fails with EEXIST rather than replacing).
func (OSFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

// Remove is os.Remove.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// SyncDir opens the directory and fsyncs it.
func (OSFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
