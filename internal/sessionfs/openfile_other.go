//go:build !unix

package sessionfs

import (
	"io/fs"
	"os"
)

// openFile is os.OpenFile.
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
