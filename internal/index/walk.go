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
	"strconv"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
)

// racyWindow: a file or folder modified this recently may change again
// within the file system's timestamp granularity without its stamp
// changing, so its stamp is not trusted yet (it is looked at again on the
// next use: git's racy-timestamp rule).
const racyWindow = 2 * time.Second

// lstatFolder stats a folder for its stamp (a test replaces it with a
// file system of coarse timestamps).
var lstatFolder = os.Lstat

// racy is the revision recorded for a log or folder modified within
// racyWindow of the walk: it never equals a real revision.
const racy = "racy"

// observation is one walk of the store root: the stamp of the root and of
// every project folder (taken before it was read), a fingerprint of each
// project folder's entries (names and kinds), the fingerprint of the whole
// folder structure, and the revision of every session folder's log (""
// when it has none).
type observation struct {
	root      string            // stamp of the root folder
	names     []string          // project folders in directory order
	projects  map[string]string // project folder name → its stamp
	pieces    map[string]string // project folder name → fingerprint of its entries
	structure string
	logs      map[string]string // session folder relative to the root → revision
}

// walk observes the root: one stat and ReadDir of the root and of each
// project folder, one stat per session folder's log.
func walk(ctx context.Context, root string) (*observation, error) {
	start := now()
	obs := &observation{projects: map[string]string{}, pieces: map[string]string{}, logs: map[string]string{}}
	obs.root = folderStamp(root, start)
	names, err := projectNames(root)
	if errors.Is(err, fs.ErrNotExist) {
		obs.structure = structureOf(nil, nil)
		return obs, nil
	}
	if err != nil {
		return nil, err
	}
	obs.names = names
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		obs.projects[name] = folderStamp(filepath.Join(root, name), start)
		piece, sessions, err := readProject(root, name)
		if err != nil {
			return nil, err
		}
		obs.pieces[name] = piece
		for _, dir := range sessions {
			obs.logs[dir] = logRevision(under(root, dir), start)
		}
	}
	obs.structure = structureOf(names, obs.pieces)
	return obs, nil
}

// projectNames lists the folders directly under the root, in directory
// order (the store's listing order).
func projectNames(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// readProject reads one project folder: the fingerprint of its entries
// and its session folders (relative to the root).
func readProject(root, name string) (string, []string, error) {
	entries, err := os.ReadDir(filepath.Join(root, name))
	if err != nil {
		return "", nil, err
	}
	h := sha256.New()
	var sessions []string
	var line []byte
	for _, e := range entries {
		// As fmt's "%d%q\n" of its type and name.
		line = strconv.AppendUint(line[:0], uint64(e.Type()), 10)
		line = append(strconv.AppendQuote(line, e.Name()), '\n')
		h.Write(line)
		if e.IsDir() {
			sessions = append(sessions, under(name, e.Name()))
		}
	}
	return hex.EncodeToString(h.Sum(nil)), sessions, nil
}

// structureOf is the fingerprint of the whole folder structure: the
// project folders in order, each with the fingerprint of its entries.
func structureOf(names []string, pieces map[string]string) string {
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "p%q %s\n", name, pieces[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// folderStamp names one version of a folder's entry list (its stat), or
// racy when it was modified within racyWindow of now, or "" when it
// cannot be stat'ed.
func folderStamp(path string, now time.Time) string {
	info, err := lstatFolder(path)
	if err != nil {
		return ""
	}
	if now.Sub(info.ModTime()) < racyWindow {
		return racy
	}
	return statRevision(info)
}

// logRevision is the revision of the log in a session folder: the stat of
// session.jsonl, else of a compressed log, else "".
func logRevision(dir string, now time.Time) string {
	for _, name := range []string{logpath.FileName, logpath.FileName + ".zstd"} {
		info, err := os.Stat(under(dir, name))
		if err != nil {
			continue
		}
		if now.Sub(info.ModTime()) < racyWindow {
			return racy
		}
		return name + ":" + statRevision(info)
	}
	return ""
}

// under is filepath.Join(dir, name) for a clean dir and a name that is a
// clean relative path of names a directory read returned (never "." or
// ".."), without cleaning the whole path again: the walk joins two per log.
func under(dir, name string) string {
	if dir == "" {
		return name
	}
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}
