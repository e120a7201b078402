package index

import (
	"errors"
	"syscall"
	"unsafe"
)

// watcher tells which session folders changed since they were watched,
// through one non-blocking inotify instance. The kernel queues an event
// before the modifying call returns, so a change made before a use began
// is in the queue when that use drains it.
type watcher struct {
	fd  int
	ids map[int32]string // watch descriptor → session id
	buf []byte
}

// watchMask: every change to a session folder's entries or to a file in
// it (writes, truncation, attribute and time changes, renames), and the
// folder itself going away.
const watchMask = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE |
	syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF

// newWatcher returns a watcher, or nil when inotify is unavailable (the
// index then stats every log it depends on at every use).
func newWatcher() *watcher {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	return &watcher{fd: fd, ids: map[int32]string{}, buf: make([]byte, 64<<10)}
}

// watch starts watching the session folder dir of session id; false when
// it cannot be watched (the caller stats it at every use).
func (w *watcher) watch(dir, id string) bool {
	if w == nil {
		return false
	}
	wd, err := syscall.InotifyAddWatch(w.fd, dir, watchMask|syscall.IN_ONLYDIR)
	if err != nil {
		return false
	}
	w.ids[int32(wd)] = id
	return true
}

// drain reads every queued event without blocking and calls changed with
// the id of each session whose folder changed; overflow is true when the
// queue overflowed (any watched session may have changed).
func (w *watcher) drain(changed func(id string)) (overflow bool) {
	if w == nil {
		return false
	}
	for {
		n, err := syscall.Read(w.fd, w.buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return overflow
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&syscall.IN_Q_OVERFLOW != 0 {
				overflow = true
				continue
			}
			if id, ok := w.ids[ev.Wd]; ok {
				changed(id)
			}
			if ev.Mask&syscall.IN_IGNORED != 0 {
				delete(w.ids, ev.Wd)
			}
		}
	}
}

// close releases the inotify instance.
func (w *watcher) close() {
	if w != nil {
		_ = syscall.Close(w.fd)
	}
}
