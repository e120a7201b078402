//go:build unix

package index

import (
	"fmt"
	"io/fs"
	"strconv"
	"syscall"
)

// statRevision names one version of a file: device, inode, size, mtime
// and ctime (ctime changes on every write and cannot be set back).
func statRevision(info fs.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%d:%d", info.Size(), info.ModTime().UnixNano())
	}
	b := make([]byte, 0, 80)
	b = strconv.AppendUint(b, uint64(st.Dev), 10)
	b = strconv.AppendUint(append(b, ':'), st.Ino, 10)
	b = strconv.AppendInt(append(b, ':'), st.Size, 10)
	b = strconv.AppendInt(append(b, ':'), int64(st.Mtim.Sec), 10)
	b = strconv.AppendInt(append(b, '.'), int64(st.Mtim.Nsec), 10)
	b = strconv.AppendInt(append(b, ':'), int64(st.Ctim.Sec), 10)
	b = strconv.AppendInt(append(b, '.'), int64(st.Ctim.Nsec), 10)
	return string(b)
}
