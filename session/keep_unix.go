//go:build unix

package session

import "syscall"

// defaultKeptFiles is the soft open-file limit (which the Go runtime
// raises to the hard limit at start-up) less a reserve of a quarter of it,
// at least 1,024, left to the rest of the process; the store sheds its
// kept files when an open still runs out of descriptors.
func defaultKeptFiles() int {
	limit := openFileLimit()
	return int(max(limit-max(limit/4, 1024), 0))
}

// defaultOpenFiles is half the reserve defaultKeptFiles leaves (at least
// 64): how many log files writers may hold open outside the kept slots.
func defaultOpenFiles() int {
	limit := openFileLimit()
	return int(max(min(max(limit/4, 1024), limit)/2, 64))
}

// openFileLimit is the soft open-file limit (0 when it cannot be read).
func openFileLimit() int64 {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 0
	}
	return int64(min(lim.Cur, 1<<22))
}
