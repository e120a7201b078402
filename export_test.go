package dsh

import (
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/session"
)

// OpenOnFS is Open with the JSONL store at opts.Dir over fsys: the
// external tests inject file-system faults (a full disk) through it.
func OpenOnFS(opts Options, fsys sessionfs.FS) (*Runtime, error) {
	return openWith(opts, session.WithFS(fsys))
}
