package session

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// encodeBatch appends the JSONL lines of events to buf after checking that
// they continue the log at seq next, carry valid compact JSON and use no
// retired vocabulary.
func encodeBatch(id string, next int64, events []Event, buf []byte) ([]byte, error) {
	if msg, legacy := legacyEvent(id, events); legacy {
		return nil, invalidf("%s", msg)
	}
	for i, e := range events {
		if e.Seq != next+int64(i) {
			return nil, &kindError{kind: ErrSeqMismatch, msg: fmt.Sprintf(
				`append seq mismatch for "%s": expected %d at index %d, got %d`, id, next+int64(i), i, e.Seq)}
		}
		if err := checkRaw("data", e.Data); err != nil {
			return nil, invalidf(`session "%s": event %d (%s): %v`, id, e.Seq, e.Type, err)
		}
		if err := checkRaw("surfaceOp", e.SurfaceOp); err != nil {
			return nil, invalidf(`session "%s": event %d (%s): %v`, id, e.Seq, e.Type, err)
		}
		buf = append(appendEvent(buf, e, false), '\n')
	}
	return buf, nil
}

// appendDurably writes data at the end of f (opened O_APPEND, size bytes
// long) and syncs it. On a write or sync error it truncates f back to size
// and syncs again, so no partial batch survives; the returned error joins
// a rollback failure if there is one.
func appendDurably(f sessionfs.File, size int64, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		return nil
	}
	if rerr := truncateDurably(f, size); rerr != nil {
		return errors.Join(err, fmt.Errorf("failed to roll back append: %w", rerr))
	}
	return err
}

func truncateDurably(f sessionfs.File, size int64) error {
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// materialize publishes a new log atomically:
// folders made with mode 0700 and their parents fsynced, the content
// written to <path>.<12 hex>.tmp (O_EXCL, 0600) and fsynced, hard-linked to
// path (EEXIST is ErrExists, never an overwrite), the folder fsynced, the
// temporary name removed. It returns the file still open for appending
// (the link shares its inode); the caller keeps or closes it.
func (s *JSONL) materialize(path string, data []byte) (sessionfs.File, error) {
	dir := filepath.Dir(path)
	if err := s.mkdirDurably(dir); err != nil {
		return nil, err
	}
	tmp, f, err := s.writeTemp(path, data)
	if err != nil {
		return nil, err
	}
	defer s.fs.Remove(tmp) //nolint:errcheck // a leftover temporary link is harmless
	err = s.fs.Link(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		err = existsf(`refusing to materialize "%s": a log already exists on disk`, path)
	}
	if err == nil {
		err = s.fs.SyncDir(dir)
	}
	if err != nil {
		closeQuietly(f)
		return nil, err
	}
	return f, nil
}

// writeTemp writes data to a fresh temporary file next to path, syncs it
// and returns its name and the file, open for appending.
func (s *JSONL) writeTemp(path string, data []byte) (string, sessionfs.File, error) {
	// The name need only be unlikely to collide (O_EXCL refuses one that
	// does): a per-process generator, no getrandom(2) per log.
	tmp := fmt.Sprintf("%s.%012x.tmp", path, rand.Uint64()&(1<<48-1))
	f, err := s.fs.OpenFile(tmp, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		closeQuietly(f)
		s.fs.Remove(tmp) //nolint:errcheck // best effort; the write error matters
		return "", nil, err
	}
	return tmp, f, nil
}

// mkdirDurably creates dir and any missing parents up to the root's
// parent, each with mode 0700, fsyncing the parent of every folder it
// creates. An existing dir costs one mkdir(2) and nothing else.
func (s *JSONL) mkdirDurably(dir string) error {
	err := s.fs.Mkdir(dir, 0o700)
	parent := filepath.Dir(dir)
	if errors.Is(err, fs.ErrNotExist) && parent != dir {
		if err = s.mkdirDurably(parent); err == nil {
			err = s.fs.Mkdir(dir, 0o700)
		}
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return err
	}
	return s.fs.SyncDir(parent)
}

// keepBroken appends the bytes a repair is about to cut from the log at
// path to <path>.broken (created with mode 0600; earlier cuts stay before
// them), makes them durable with the folder entry, and logs a warning
// naming the log and the byte count.
func (s *JSONL) keepBroken(path string, removed []byte) error {
	broken := path + ".broken"
	f, err := s.fs.OpenFile(broken, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(removed)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.fs.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("keeping the %d bytes cut from %s in %s: %w", len(removed), path, broken, err)
	}
	s.logger.Warn("session log repaired: damaged or torn bytes cut from its end and kept beside it",
		"file", path, "bytes", len(removed), "kept", broken)
	return nil
}
