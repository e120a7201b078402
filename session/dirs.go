package session

import (
	"errors"
	"path/filepath"
	"sync"

	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// projectDirs keeps a store's project folders open, when its file system
// can (sessionfs.DirOpener), so that reopening a log for an append and
// removing a lease record resolve the session's folder from the project
// folder's descriptor instead of walking the whole path from the root:
// beyond the kept-file budget most logs of a drain are reopened, and
// every released lease is an unlink. A call through a kept folder that
// fails is retried by path (see openLog): a project folder replaced since
// it was kept is then reached by path, and its stale descriptor is
// closed with the store.
type projectDirs struct {
	fs sessionfs.DirOpener // nil: every call goes by path

	mu      sync.RWMutex
	dirs    map[string]sessionfs.Dir // project folder → kept open
	stale   []sessionfs.Dir          // forgotten, closed with the store
	closed  bool
	refused map[string]bool // project folders that could not be opened
}

func newProjectDirs(fsys sessionfs.FS) *projectDirs {
	d, _ := fsys.(sessionfs.DirOpener)
	return &projectDirs{fs: d, dirs: map[string]sessionfs.Dir{}, refused: map[string]bool{}}
}

// projectOf is the project folder of a file two levels below it (a log,
// a lease record): <project>/<session folder>/<file>.
func projectOf(path string) string { return filepath.Dir(filepath.Dir(path)) }

// of is the kept project folder holding path, opened the first time;
// nil when the store's file system keeps none, the folder cannot be
// opened, or the store has closed. The caller holds the read lock until
// it is done with the Dir (see use).
func (p *projectDirs) of(path string) sessionfs.Dir {
	project := projectOf(path)
	if d := p.dirs[project]; d != nil || p.closed || p.refused[project] {
		return d
	}
	p.mu.RUnlock()
	p.mu.Lock()
	if p.dirs[project] == nil && !p.closed && !p.refused[project] {
		if d, err := p.fs.OpenDir(project); err == nil {
			p.dirs[project] = d
		} else {
			p.refused[project] = true // a path that is never a folder is not retried
		}
	}
	p.mu.Unlock()
	p.mu.RLock()
	if p.closed {
		return nil
	}
	return p.dirs[project]
}

// use calls fn with the kept project folder holding path, under the read
// lock that keeps it open; false (fn not called) when there is none.
func (p *projectDirs) use(path string, fn func(sessionfs.Dir) error) (bool, error) {
	if p == nil || p.fs == nil {
		return false, nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	d := p.of(path)
	if d == nil {
		return false, nil
	}
	return true, fn(d)
}

// forget stops using the kept folder holding path after a call through it
// failed; it is closed with the store (a caller may still be using it).
func (p *projectDirs) forget(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	project := projectOf(path)
	if d := p.dirs[project]; d != nil {
		delete(p.dirs, project)
		p.stale = append(p.stale, d)
	}
}

// close closes every kept folder once the calls through them are over;
// later calls go by path.
func (p *projectDirs) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for project, d := range p.dirs {
		errs = append(errs, d.Close())
		delete(p.dirs, project)
	}
	for _, d := range p.stale {
		errs = append(errs, d.Close())
	}
	p.stale = nil
	return errors.Join(errs...)
}
