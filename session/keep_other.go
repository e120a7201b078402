//go:build !unix

package session

// defaultKeptFiles keeps no file open between writes where the open-file
// limit cannot be read.
func defaultKeptFiles() int { return 0 }
