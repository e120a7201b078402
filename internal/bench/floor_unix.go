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
