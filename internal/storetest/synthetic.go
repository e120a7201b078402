package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
)

// WriteSynthetic writes each log straight to its path under root, in the
// exact bytes the JSONL store writes (the events checked as Append checks
// them), for benchmarks and tests that need large stores quickly (e.g.
// 10k sessions of 50 events). It skips the temporary file, the hard link
// and every fsync, so it is fast and NOT crash-safe, and it overwrites an
// existing log. Folders get mode 0700, files 0600. Events must have
// Seq == index. It blocks until every file is written.
func WriteSynthetic(root string, logs ...session.Log) error {
	var buf []byte
	for _, log := range logs {
		path, err := logpath.Path(root, log.Header.Cwd, log.Header.ID)
		if err != nil {
			return err
		}
		if buf, err = appendLog(buf[:0], log); err != nil {
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

// appendLog appends log's lines, each ending in LF, to buf.
func appendLog(buf []byte, log session.Log) ([]byte, error) {
	header, err := log.Header.MarshalJSON()
	if err != nil {
		return nil, err
	}
	lines, err := session.EventLines(log.Header.ID, 0, log.Events)
	if err != nil {
		return nil, err
	}
	buf = append(append(buf, header...), '\n')
	for _, line := range lines {
		buf = append(append(buf, line...), '\n')
	}
	return buf, nil
}

// RelistingStore is a store whose every read costs a listing: before every
// Inspect it lists the whole store and reports an id missing from that
// listing as not found, which makes listing D children among C sessions
// cost O(D×C), the naive catalog the listing benchmarks compare against.
// Inspect blocks on the List, then on the wrapped Inspect; every other
// method is the wrapped store's.
type RelistingStore struct{ session.Store }

// Inspect lists the wrapped store, then inspects id if it was listed and
// returns an error matching session.ErrNotFound otherwise.
func (s RelistingStore) Inspect(ctx context.Context, id string) (*session.Log, error) {
	headers, err := s.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, h := range headers {
		if h.ID == id {
			return s.Store.Inspect(ctx, id)
		}
	}
	return nil, fmt.Errorf("session %q: %w", id, session.ErrNotFound)
}
