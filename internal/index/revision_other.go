//go:build !unix

package index

import (
	"fmt"
	"io/fs"
)

// statRevision names one version of a file by its size and mtime.
func statRevision(info fs.FileInfo) string {
	return fmt.Sprintf("%d:%d", info.Size(), info.ModTime().UnixNano())
}
