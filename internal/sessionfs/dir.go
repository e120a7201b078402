package sessionfs

import (
	"errors"
	"io/fs"
)

// DirOpener is an FS that can keep a folder open and open and unlink the
// files below it relative to that descriptor (openat(2), unlinkat(2)),
// without walking the path to the folder again on every call. OSFS and
// NoSync are; a store over an FS that is not opens by path. A type that
// embeds OSFS and changes its OpenFile must change OpenDir too (or embed
// the FS interface instead, as internal/faultfs does), else the files
// opened through its Dirs bypass its OpenFile.
type DirOpener interface {
	// OpenDir opens the folder name and keeps it open until Close.
	OpenDir(name string) (Dir, error)
}

// Dir is a folder kept open. Its methods take the whole path of a file
// below the folder (the folder's name, a separator, then the rest), the
// name their errors carry; the rest is resolved from the descriptor, so
// a folder moved or replaced since OpenDir is not followed. They are safe
// for concurrent use until Close, which must come after every call.
type Dir interface {
	// OpenFile opens path as FS.OpenFile does.
	OpenFile(path string, flag int, perm fs.FileMode) (File, error)
	// Unlink removes the file path with one unlink (never a folder).
	Unlink(path string) error
	// Close closes the folder's descriptor.
	Close() error
}

// errNotBelow is a path given to a Dir that does not lie below it.
var errNotBelow = errors.New("sessionfs: the path is not below the kept folder")

// below is path relative to the folder dir ("" when path does not lie
// below it).
func below(dir, path string) string {
	if len(path) <= len(dir)+1 || path[:len(dir)] != dir || !isSeparator(path[len(dir)]) {
		return ""
	}
	return path[len(dir)+1:]
}

// OpenDir opens the folder name for NoSync: the files it opens do not
// sync either.
func (n NoSync) OpenDir(name string) (Dir, error) {
	d, err := n.OSFS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return noSyncDir{d}, nil
}

// noSyncDir is a Dir whose files' Sync does nothing.
type noSyncDir struct{ Dir }

func (d noSyncDir) OpenFile(path string, flag int, perm fs.FileMode) (File, error) {
	f, err := d.Dir.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}
