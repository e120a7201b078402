package dsh

import (
	"syscall"

	"github.com/dsh-actors/dsh-actors/session"
)

// minRoom is the free space below which a disk counts as full for a
// session log: less than a few events.
const minRoom = 64 << 10

// diskHasRoom reports whether the file system of a store with a root
// folder (the JSONL store) has at least minRoom free for this process;
// a store without one, or a failed statfs, counts as having room (the
// next write tells).
func diskHasRoom(store session.Store) bool {
	rooted, ok := store.(interface{ Root() string })
	if !ok {
		return true
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(rooted.Root(), &fs); err != nil {
		return true
	}
	return fs.Bavail*uint64(fs.Bsize) >= minRoom
}
