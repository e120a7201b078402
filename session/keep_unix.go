//go:build unix

package session

import "syscall"

// defaultKeptFiles is half the soft open-file limit (which the Go runtime
// raises to the hard limit at start-up), leaving the other half to the
// rest of the process.
func defaultKeptFiles() int {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 0
	}
	return int(min(lim.Cur/2, 1<<20))
}
