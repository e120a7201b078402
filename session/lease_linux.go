package session

import (
	"os"
	"syscall"
)

// fOFDSetLk is Linux's F_OFD_SETLK: a byte-range lock owned by the open
// file description, so it conflicts between two opens of the file in one
// process as between processes, and the kernel drops it when the
// description closes (also when the process dies).
const fOFDSetLk = 37

// lockRange takes the write lock of byte off of f without waiting; false
// when someone else holds it.
func lockRange(f *os.File, off int64) (bool, error) {
	err := setLock(f, off, syscall.F_WRLCK)
	if err == syscall.EAGAIN || err == syscall.EACCES {
		return false, nil
	}
	return err == nil, err
}

// unlockRange gives byte off of f up.
func unlockRange(f *os.File, off int64) error { return setLock(f, off, syscall.F_UNLCK) }

func setLock(f *os.File, off int64, typ int16) error {
	lk := syscall.Flock_t{Type: typ, Whence: 0, Start: off, Len: 1}
	for {
		err := syscall.FcntlFlock(f.Fd(), fOFDSetLk, &lk)
		if err != syscall.EINTR {
			return err
		}
	}
}
