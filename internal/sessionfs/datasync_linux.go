package sessionfs

import (
	"os"
	"syscall"
)

// datasync is fdatasync(2): the data and the metadata needed to read it
// back (the size) reach the device; timestamps may not.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
