package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dsh-actors/dsh-actors/session"
)

// racyWindow: a log modified this recently may change again within the
// file system's timestamp granularity without its revision changing, so
// its revision is not trusted yet (it is re-read on the next use).
const racyWindow = 2 * time.Second

// racy is the revision recorded for a log modified within racyWindow of
// the walk: it never equals a real revision.
const racy = "racy"

// observation is one walk of the store root: a fingerprint of the folder
// structure (every project folder's entry names and kinds) and the
// revision of every session folder's log ("" when it has none).
type observation struct {
	structure string
	logs      map[string]string // session folder relative to the root → revision
}

// walk observes the root: one ReadDir of the root and of each project
// folder, one stat per session folder's log.
func walk(ctx context.Context, root string) (*observation, error) {
	start := time.Now()
	h := sha256.New()
	obs := &observation{logs: map[string]string{}}
	projects, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		obs.structure = hex.EncodeToString(h.Sum(nil))
		return obs, nil
	}
	if err != nil {
		return nil, err
	}
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		entries, err := os.ReadDir(filepath.Join(root, p.Name()))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "p%q\n", p.Name())
		for _, e := range entries {
			fmt.Fprintf(h, "%d%q\n", e.Type(), e.Name())
			if e.IsDir() {
				dir := filepath.Join(p.Name(), e.Name())
				obs.logs[dir] = logRevision(filepath.Join(root, dir), start)
			}
		}
	}
	obs.structure = hex.EncodeToString(h.Sum(nil))
	return obs, nil
}

// logRevision is the revision of the log in a session folder: the stat of
// session.jsonl, else of a compressed log, else "".
func logRevision(dir string, walkStart time.Time) string {
	for _, name := range []string{session.LogFileName, session.LogFileName + ".zstd"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if walkStart.Sub(info.ModTime()) < racyWindow {
			return racy
		}
		return name + ":" + statRevision(info)
	}
	return ""
}
