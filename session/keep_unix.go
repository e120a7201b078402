//go:build unix

package session

import "syscall"

// defaultKeptFiles is the soft open-file limit (which the Go runtime
// raises to the hard limit at start-up) less a reserve of a quarter of it,
// at least 1,024, left to the rest of the process; the store sheds its
// kept files when an open still runs out of descriptors.
func defaultKeptFiles() int {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 0
	}
	limit := int64(min(lim.Cur, 1<<22))
	return int(max(limit-max(limit/4, 1024), 0))
}
