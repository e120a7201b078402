//go:build unix

package bench

import (
	"sync"
	"syscall"
)

// floorKeptFiles is how many floor nodes keep their log open: half the
// open-file limit, so a forest larger than the process may hold open
// still runs (the runtime's store likewise keeps a bounded number).
var floorKeptFiles = sync.OnceValue(func() int {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 512
	}
	return int(min(lim.Cur, 1<<22) / 2)
})

// storeKeptFiles is the kept-file budget a JSONL store gives itself by
// default: the open-file limit less a quarter of it (at least 1,024).
// Row 9's end-of-life floor (9i) keeps as many logs open.
var storeKeptFiles = sync.OnceValue(func() int {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 0
	}
	limit := int(min(lim.Cur, 1<<22))
	return max(limit-max(limit/4, 1024), 0)
})
