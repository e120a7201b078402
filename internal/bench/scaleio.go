//go:build unix

package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// endIOLog is one log of row 9's end-of-life floor (9i): its path, its
// lease record, and its descriptor while it is kept open (else -1).
type endIOLog struct {
	path, lease string
	fd          int
}

// measureEndIO is row 9's end-of-life floor at live logs, in a new
// folder under dir: the I/O a drained child's log and lease take without
// the runtime. Each log has a folder of its own with its log file and a
// lease record linked to one of floorOwners owner files, as a JSONL
// store lays them out; the first storeKeptFiles() logs keep their file
// open, as the store's kept-file budget does. Timed, per log: a turn's
// end line appended (through the kept file, else a file opened and
// closed for it) and the lease record unlinked. At sizes beyond the
// budget most logs reopen their file, which no runtime can skip without
// holding a descriptor per log.
func measureEndIO(dir string, live int) (Phase, error) {
	root, err := os.MkdirTemp(dir, "endio-*")
	if err != nil {
		return Phase{}, err
	}
	defer os.RemoveAll(root)
	logs, err := endIOLogs(root, live)
	defer func() {
		for _, l := range logs {
			if l.fd >= 0 {
				syscall.Close(l.fd)
			}
		}
	}()
	if err != nil {
		return Phase{}, err
	}
	return timePhase(live, func() error {
		for _, l := range logs {
			if err := l.end(); err != nil {
				return fmt.Errorf("end-of-life floor: %w", err)
			}
		}
		return nil
	})
}

// endIOLogs lays out live logs under root.
func endIOLogs(root string, live int) ([]endIOLog, error) {
	owners, err := floorOwnerFiles(root)
	if err != nil {
		return nil, err
	}
	logs := make([]endIOLog, 0, live)
	for i := range live {
		folder := filepath.Join(root, fmt.Sprint(i))
		if err := os.Mkdir(folder, 0o700); err != nil {
			return logs, fmt.Errorf("end-of-life floor: %w", err)
		}
		l := endIOLog{path: filepath.Join(folder, "session.jsonl"), lease: filepath.Join(folder, "session.lease"), fd: -1}
		fd, err := syscall.Open(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return logs, fmt.Errorf("end-of-life floor: %w", err)
		}
		if _, err := syscall.Write(fd, floorLine); err != nil {
			return logs, errors.Join(err, syscall.Close(fd))
		}
		if i < storeKeptFiles() {
			l.fd = fd
		} else if err := syscall.Close(fd); err != nil {
			return logs, err
		}
		logs = append(logs, l)
		if err := os.Link(owners[i%floorOwners], l.lease); err != nil {
			return logs, fmt.Errorf("end-of-life floor: %w", err)
		}
	}
	return logs, nil
}

// end appends the turn's end line and gives the lease up, with the
// fewest system calls that can: write(2) to a kept descriptor, else
// open(2), write(2) and close(2); then unlink(2).
func (l endIOLog) end() error {
	fd := l.fd
	if fd < 0 {
		var err error
		if fd, err = syscall.Open(l.path, os.O_WRONLY|os.O_APPEND|syscall.O_CLOEXEC, 0); err != nil {
			return err
		}
	}
	_, err := syscall.Write(fd, floorLine)
	if l.fd < 0 {
		err = errors.Join(err, syscall.Close(fd))
	}
	return errors.Join(err, syscall.Unlink(l.lease))
}
