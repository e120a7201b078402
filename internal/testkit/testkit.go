// Package testkit holds helpers shared by the module's tests. Nothing
// outside _test.go files imports it.
package testkit

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
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

// GoroutinesIn counts the goroutines whose stack contains fn (a function
// name as runtime.Stack prints it, e.g. "session.(*JSONL).runWriter").
func GoroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}

// Closed reports, without waiting, whether c is closed.
func Closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// SyncBuffer is a goroutine-safe log sink (an io.Writer whose String is
// everything written so far). Its zero value is ready to use.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
