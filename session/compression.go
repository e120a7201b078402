package session

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// Compression is the physical encoding of a store's logs. A root holds
// logs of one encoding only.
type Compression int

const (
	// CompressionNone stores each log as plain JSONL in session.jsonl.
	CompressionNone Compression = iota
	// CompressionZstd stores each log as session.jsonl.zstd: concatenated
	// checksummed Zstandard frames, the header alone in the first, then
	// one frame per durable append batch (the original's default).
	CompressionZstd
)

// zstdLogFileName is the transcript file of a Zstandard store.
const zstdLogFileName = logpath.FileName + ".zstd"

// String returns "none" or "zstd", the original's config values.
func (c Compression) String() string {
	if c == CompressionZstd {
		return "zstd"
	}
	return "none"
}

// fileName is the transcript file name of the encoding.
func (c Compression) fileName() string {
	if c == CompressionZstd {
		return zstdLogFileName
	}
	return logpath.FileName
}

func (c Compression) other() Compression { return 1 - c }

// suffix is the file-name suffix the original's messages use.
func (c Compression) suffix() string {
	if c == CompressionZstd {
		return ".jsonl.zstd"
	}
	return ".jsonl"
}

// WithCompression fixes the store's encoding, as the original's
// compression setting does: a root holding a log of the other encoding is
// refused. Without it a store takes the encoding of the logs its root
// already holds, and a root holding none gets CompressionNone.
func WithCompression(c Compression) Option {
	return func(s *JSONL) { s.compression, s.fixedCompression = c, true }
}

// WithNewStoreCompression sets the encoding of a store whose root holds
// no log yet (CompressionNone without it). A root holding logs keeps
// theirs, and WithCompression, in any order, overrides it.
func WithNewStoreCompression(c Compression) Option {
	return func(s *JSONL) {
		if !s.fixedCompression {
			s.compression = c
		}
	}
}

// Compression returns the store's encoding, deciding it from the root's
// logs first when no WithCompression fixed it (see checkRoot).
func (s *JSONL) Compression() (Compression, error) {
	if err := s.checkOpen(); err != nil {
		return CompressionNone, err
	}
	s.rootOnce.Do(func() { s.rootErr = s.scanRoot() })
	return s.compression, s.rootErr
}

func (s *JSONL) logName() string { return s.compression.fileName() }

// logPath is logpath.Path with the store's file name.
func (s *JSONL) logPath(cwd, id string) (string, error) {
	path, err := logpath.Path(s.root, cwd, id)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(path), s.logName()), nil
}

// encodingMismatch is the original's refusal of an artifact of the other
// encoding.
func (s *JSONL) encodingMismatch(path string) error { return encodingMismatch(path, s.compression) }

func encodingMismatch(path string, configured Compression) error {
	msg := fmt.Sprintf(`session artifact %s uses %s, but this backend is configured for compression "%s"; `+
		`use a separate root or select the matching compression mode`,
		appendJSONString(nil, path), configured.other().suffix(), configured)
	return &unsupportedError{Path: path, Msg: msg}
}

// checkOpposite refuses a session folder holding the other encoding's log.
func (s *JSONL) checkOpposite(dir string) error {
	path := filepath.Join(dir, s.compression.other().fileName())
	if _, err := s.fs.Stat(path); err == nil {
		return s.encodingMismatch(path)
	}
	return nil
}

// scanRoot is the once-per-store root check: every session folder is
// visited (refusing the flat layout), the encoding is decided from the
// first log found unless WithCompression fixed it, and a log of the other
// encoding anywhere is refused.
func (s *JSONL) scanRoot() error {
	projects, err := s.projectDirs(context.Background())
	if err != nil {
		return err
	}
	decided := s.fixedCompression
	visit := func(dir string) error {
		s.addFolder(filepath.Base(dir))
		if !decided {
			for _, c := range []Compression{CompressionNone, CompressionZstd} {
				if _, err := s.fs.Stat(filepath.Join(dir, c.fileName())); err == nil {
					s.compression, decided = c, true
					break
				}
			}
		}
		return s.checkOpposite(dir)
	}
	for _, project := range projects {
		if err := s.sessionDirs(project, visit); err != nil {
			return err
		}
	}
	return nil
}

func (s *JSONL) addFolder(name string) {
	s.foldersMu.Lock()
	defer s.foldersMu.Unlock()
	if s.folders == nil {
		s.folders = map[string]bool{}
	}
	s.folders[name] = true
}

func (s *JSONL) hasFolder(name string) bool {
	s.foldersMu.Lock()
	defer s.foldersMu.Unlock()
	return s.folders[name]
}
