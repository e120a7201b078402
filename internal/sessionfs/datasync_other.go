//go:build unix && !linux

package sessionfs

import "syscall"

// syncFD falls back to a full fsync(2) where fdatasync is unavailable.
func syncFD(fd int) error { return syscall.Fsync(fd) }

// syncOp names syncFD in errors.
const syncOp = "fsync"
