package sessionfs

import "io/fs"

// NoSync is the real file system with every file and directory sync a
// no-op: a store that acknowledges writes a crash may lose, for
// measurements whose durability must cost nothing so that the runtime's
// own overhead shows, and for the "no fsync" baseline.
type NoSync struct{ OSFS }

// OpenFile opens the file as OSFS does; its Sync does nothing.
func (n NoSync) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := n.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

// SyncDir does nothing.
func (NoSync) SyncDir(string) error { return nil }

// noSyncFile is a File whose Sync does nothing.
type noSyncFile struct{ File }

func (noSyncFile) Sync() error { return nil }
