package sessionfs

import "syscall"

// syncFD is fdatasync(2): the data and the metadata needed to read it
// back (the size) reach the device; timestamps may not.
func syncFD(fd int) error { return syscall.Fdatasync(fd) }

// syncOp names syncFD in errors.
const syncOp = "fdatasync"
