//go:build unix

package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// endIOLog is one log of row 9's end-of-life floor (9i): its folder's
// name in the project folder, and its descriptor while it is kept open
// (else -1).
type endIOLog struct {
	name string
	fd   int
}

// endIOHead is what a live child's log holds before its turn ends (its
// header, descriptor, prompt and turn start): about a kilobyte.
var endIOHead = bytes.Repeat([]byte(`{"seq":0,"time":1764522000000,"type":"pad","data":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`+"\n"), 8)

// measureEndIO is row 9's end-of-life floor at live logs, in a new
// folder under dir: the I/O a drained child's log and lease take without
// the runtime, laid out and reached as a JSONL store does. One project
// folder holds a folder per log, named like a session id, with its log
// file (about a kilobyte) and a lease record linked to one of
// floorOwners owner files in the root; the project folder is kept open
// and every call goes relative to it (openat(2), unlinkat(2)). The first
// storeKeptFiles() logs keep their file open, as the store's kept-file
// budget does. Timed, per log, one log after another: the turn's end
// line appended (through the kept file, else openat, write and close of
// the log's own file) and the lease record unlinked. At sizes beyond the
// budget most logs reopen their file, which no runtime can skip without
// holding a descriptor per log.
func measureEndIO(dir string, live int) (Phase, error) {
	root, err := os.MkdirTemp(dir, "endio-*")
	if err != nil {
		return Phase{}, err
	}
	defer os.RemoveAll(root)
	project, logs, err := endIOLogs(root, live)
	defer closeEndIO(project, logs)
	if err != nil {
		return Phase{}, fmt.Errorf("end-of-life floor: %w", err)
	}
	return timePhase(live, func() error {
		for _, l := range logs {
			if err := l.end(project); err != nil {
				return fmt.Errorf("end-of-life floor: %w", err)
			}
		}
		return nil
	})
}

// endIOLogs lays out live logs under root and returns the project
// folder's descriptor (-1 when it could not be opened) and the logs.
func endIOLogs(root string, live int) (int, []endIOLog, error) {
	owners, err := floorOwnerFiles(root)
	if err != nil {
		return -1, nil, err
	}
	projectPath := filepath.Join(root, "-work-project")
	if err := os.Mkdir(projectPath, 0o700); err != nil {
		return -1, nil, err
	}
	project, err := unix.Open(projectPath, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, err
	}
	logs := make([]endIOLog, 0, live)
	for i := range live {
		l := endIOLog{name: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), fd: -1}
		if err := unix.Mkdirat(project, l.name, 0o700); err != nil {
			return project, logs, err
		}
		fd, err := unix.Openat(project, l.name+"/session.jsonl", unix.O_CREAT|unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return project, logs, err
		}
		if _, err := unix.Write(fd, endIOHead); err != nil {
			return project, logs, errors.Join(err, unix.Close(fd))
		}
		if i < storeKeptFiles() {
			l.fd = fd
		} else if err := unix.Close(fd); err != nil {
			return project, logs, err
		}
		logs = append(logs, l)
		if err := unix.Linkat(unix.AT_FDCWD, owners[i%floorOwners], project, l.name+"/session.lease", 0); err != nil {
			return project, logs, err
		}
	}
	return project, logs, nil
}

// closeEndIO closes the kept logs' files and the project folder.
func closeEndIO(project int, logs []endIOLog) {
	for _, l := range logs {
		if l.fd >= 0 {
			unix.Close(l.fd)
		}
	}
	if project >= 0 {
		unix.Close(project)
	}
}

// end appends the turn's end line and gives the lease up, with the
// fewest system calls that can: write(2) to a kept descriptor, else
// openat(2), write(2) and close(2); then unlinkat(2).
func (l endIOLog) end(project int) error {
	fd := l.fd
	if fd < 0 {
		var err error
		if fd, err = unix.Openat(project, l.name+"/session.jsonl", unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0); err != nil {
			return err
		}
	}
	_, err := unix.Write(fd, floorLine)
	if l.fd < 0 {
		err = errors.Join(err, unix.Close(fd))
	}
	return errors.Join(err, unix.Unlinkat(project, l.name+"/session.lease", 0))
}
