//go:build unix

package index

import (
	"fmt"
	"io/fs"
	"syscall"
)

// statRevision names one version of a file: device, inode, size, mtime
// and ctime (ctime changes on every write and cannot be set back).
func statRevision(info fs.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%d:%d", info.Size(), info.ModTime().UnixNano())
	}
	return fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
