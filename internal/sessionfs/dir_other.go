//go:build !unix

package sessionfs

import (
	"errors"
	"io/fs"
	"os"
)

func isSeparator(c byte) bool { return os.IsPathSeparator(c) }

// OpenDir is not offered here: the store opens by path.
func (OSFS) OpenDir(name string) (Dir, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: errors.ErrUnsupported}
}
