package session

import (
	"os"
	"path/filepath"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// WriteSynthetic writes each log straight to its path under root, in the
// exact on-disk format, for benchmarks and tests that need large stores
// quickly (e.g. 10k sessions of 50 events). It skips the temporary file,
// the hard link and every fsync, so it is fast and NOT crash-safe, and it
// overwrites an existing log. Folders get mode 0700, files 0600. Events
// must have Seq == index.
func WriteSynthetic(root string, logs ...Log) error {
	var buf []byte
	for _, log := range logs {
		path, err := logpath.Path(root, log.Header.Cwd, log.Header.ID)
		if err != nil {
			return err
		}
		buf = append(appendHeader(buf[:0], log.Header), '\n')
		if buf, err = encodeBatch(log.Header.ID, 0, log.Events, buf); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, buf, 0o600); err != nil {
			return err
		}
	}
	return nil
}
