package bench

import (
	"os"
	"syscall"
)

// datasync is fdatasync(2), retried on EINTR, as the session store does.
func datasync(f *os.File) error {
	for {
		if err := syscall.Fdatasync(int(f.Fd())); err != syscall.EINTR {
			return err
		}
	}
}
