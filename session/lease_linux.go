package session

import (
	"os"
	"syscall"
)

// leaseRecords: leases are recorded in session folders and owner files
// are locked (open-file-description locks exist here).
const leaseRecords = true

// Linux's F_OFD_GETLK and F_OFD_SETLK: byte-range locks owned by the open
// file description, so they conflict between two opens of the file in one
// process as between processes, and the kernel drops them when the
// description closes (also when the process dies).
const (
	fOFDGetLk = 36
	fOFDSetLk = 37
)

// lockRange takes the write lock of byte off of f without waiting; false
// when someone else holds it.
func lockRange(f *os.File, off int64) (bool, error) {
	err := fcntlLock(f, fOFDSetLk, &syscall.Flock_t{Type: syscall.F_WRLCK, Start: off, Len: 1})
	if err == syscall.EAGAIN || err == syscall.EACCES {
		return false, nil
	}
	return err == nil, err
}

// rangeLocked reports whether another open file description holds a lock
// on byte off of f.
func rangeLocked(f *os.File, off int64) (bool, error) {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: off, Len: 1}
	if err := fcntlLock(f, fOFDGetLk, &lk); err != nil {
		return false, err
	}
	return lk.Type != syscall.F_UNLCK, nil
}

func fcntlLock(f *os.File, cmd int, lk *syscall.Flock_t) error {
	for {
		err := syscall.FcntlFlock(f.Fd(), cmd, lk)
		if err != syscall.EINTR {
			return err
		}
	}
}
