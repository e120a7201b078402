//go:build !unix

package session

// defaultKeptFiles keeps no file open between writes where the open-file
// limit cannot be read.
func defaultKeptFiles() int { return 0 }

// defaultOpenFiles is how many log files writers may hold open at once
// where the open-file limit cannot be read.
func defaultOpenFiles() int { return 256 }
