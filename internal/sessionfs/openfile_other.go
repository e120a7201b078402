//go:build !unix

package sessionfs

import (
	"io/fs"
	"os"
)

// openFile is os.OpenFile.
func openFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}
