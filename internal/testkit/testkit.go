// Package testkit holds helpers shared by the module's tests. Nothing
// outside _test.go files imports it.
package testkit

import (
	"runtime"
	"strconv"
	"strings"
)

// GoroutineID is the calling goroutine's id, read from its stack header
// ("goroutine 42 [running]:"). Tests use it to tell on which goroutine a
// callback ran; it is not for production code.
func GoroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	id, _ := strconv.ParseUint(strings.Fields(string(buf[:n]))[1], 10, 64)
	return id
}
