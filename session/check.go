package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// The kinds of Damage (Damage.Kind), which the root package documents.
const (
	// damagedLog: a log a read refuses (damage in its committed region, in
	// a complete Zstandard frame, a log stored at a path its header does
	// not identify, an id stored twice), one a resume refuses (events that
	// break the surface rules), or one whose repairing load would cut
	// bytes (a torn tail, damage in an unfinished last turn).
	damagedLog = "damaged-log"
	// unreadableHeader: a log whose first line (first frame) is not a
	// header the listing accepts, so the listing skips or refuses the
	// session.
	unreadableHeader = "unreadable-header"
	// tempFile: a leftover *.tmp file of an interrupted create.
	tempFile = "temp-file"
	// emptyFolder: a session folder holding nothing.
	emptyFolder = "empty-folder"
	// badLayout: a flat-layout log, or a log of the other encoding.
	badLayout = "bad-layout"
)

// Damage is one problem Check found.
type Damage struct {
	Kind string // "damaged-log", "unreadable-header", "temp-file", "empty-folder" or "bad-layout"
	Path string // the file or folder
	// Line is the line of the log file the damage starts at (from 1, the
	// header's; in a Zstandard log, of its plaintext), 0 when no line is
	// involved. Messages keep the original's numbering, which counts the
	// event lines after the header.
	Line int
	// FrameAt is the byte offset of the damaged Zstandard frame, -1 when
	// none is involved.
	FrameAt int64
	Msg     string // what is wrong, naming Path
}

// Check walks the JSONL store rooted at root, as it is (the encoding its
// logs have), without writing anything, and returns every problem it
// finds, in folder order: each damaged log with its line or frame, each
// header that cannot be read, leftover temporary files, empty session
// folders, flat-layout logs and logs of the other encoding. A root that
// does not exist has no problems. It fails only when a folder or file
// cannot be read at all or when ctx is done (it checks between project
// folders). It blocks while it reads.
func Check(ctx context.Context, root string) ([]Damage, error) {
	s, err := OpenJSONL(root)
	if err != nil {
		return nil, err
	}
	found, err := s.check(ctx)
	return found, errors.Join(err, s.Close())
}

// check walks every project and session folder of the root without
// writing anything and returns every problem it finds, in folder order:
// each damaged log with its line or frame, each header that cannot be
// read, leftover temporary files, empty session folders, flat-layout logs
// and logs of the other encoding. It fails only when a folder or file
// cannot be read at all.
func (s *JSONL) check(ctx context.Context) ([]Damage, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	projects, err := s.projectDirs(ctx)
	if err != nil {
		return nil, err
	}
	c := checker{s: s, ids: map[string]string{}, enc: s.compression, decided: s.fixedCompression}
	for _, project := range projects {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.project(project); err != nil {
			return nil, err
		}
	}
	return c.out, nil
}

// checker is one check call.
type checker struct {
	s       *JSONL
	out     []Damage
	ids     map[string]string // header id → path of its first log
	enc     Compression       // the root's encoding, once decided
	decided bool              // enc is known: fixed, or the first log's
}

func (c *checker) add(kind, path string, line int, frameAt int64, format string, args ...any) {
	c.out = append(c.out, Damage{Kind: kind, Path: path, Line: line, FrameAt: frameAt, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) project(project string) error {
	entries, err := c.s.fs.ReadDir(project)
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(project, e.Name())
		switch {
		case e.IsDir():
			if err := c.folder(path); err != nil {
				return err
			}
		case strings.HasSuffix(e.Name(), ".tmp"):
			c.add(tempFile, path, 0, -1, "leftover temporary file %s", path)
		case e.Type().IsRegular() && isLogArtifact(e.Name()):
			c.add(badLayout, path, 0, -1, "%s", flatLayout(path))
		}
	}
	return nil
}

// folder checks one session folder.
func (c *checker) folder(dir string) error {
	entries, err := c.s.fs.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		c.add(emptyFolder, dir, 0, -1, "empty session folder %s", dir)
		return nil
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasSuffix(e.Name(), ".tmp"):
			c.add(tempFile, path, 0, -1, "leftover temporary file %s", path)
		case e.Name() == logpath.FileName:
			err = c.log(path, CompressionNone)
		case e.Name() == zstdLogFileName:
			err = c.log(path, CompressionZstd)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// log checks one log file read in the encoding its name says.
func (c *checker) log(path string, enc Compression) error {
	if !c.decided {
		c.enc, c.decided = enc, true
	}
	if enc != c.enc {
		c.add(badLayout, path, 0, -1, "%s", encodingMismatch(path, c.enc))
	}
	buf, err := c.s.fs.ReadFile(path)
	if err != nil {
		return err
	}
	sc, err := scanAs(enc, buf, path)
	if err == nil {
		err = c.s.checkIdentity(sc.header, "", path)
	}
	if err == nil {
		err = checkEvents(sc.header.ID, sc, path)
	}
	switch {
	case err != nil:
		c.readFailure(path, err)
	case sc.cut < len(buf):
		c.cut(path, enc, len(buf), sc)
	default:
		c.duplicate(sc.header.ID, path)
	}
	if err == nil && c.surface(path, sc) {
		c.descriptors(path, sc.header, sc.events)
	}
	return nil
}

// surface reports a log whose events break the surface rules, which a
// resume refuses and the catalog lists as corrupt (before it looks at
// descriptors), and says whether the surface is sound.
func (c *checker) surface(path string, sc scanned) bool {
	err := checkSurface(sc.header.ID, sc.events, path)
	var ce *corruptError
	if !errors.As(err, &ce) {
		return true
	}
	listed := ""
	if sc.header.ParentSession != "" {
		listed = fmt.Sprintf("; list shows %s as corrupt", sc.header.ID)
	}
	c.add(damagedLog, path, 0, -1, "%s; a resume refuses it%s", ce.Msg, listed)
	return false
}

// namingPath returns msg, with the original's " (raw log: <path>)"
// suffix when it does not name path yet (the retired-key refusal, whose
// message the store keeps as the original's).
func namingPath(msg, path string) string {
	if strings.Contains(msg, path) {
		return msg
	}
	return msg + " (raw log: " + path + ")"
}

// fileLine is the file's line of event line n (the header is line 1).
func fileLine(n int) int {
	if n > 0 {
		return n + 1
	}
	return 0
}

// descriptors reports what the catalog flags in a child's own descriptor
// events (those at or after its seed length): more than one (corrupt), or
// one it cannot parse (corrupt) or whose version it does not read
// (unsupported).
func (c *checker) descriptors(path string, h Header, events []Event) {
	if h.ParentSession == "" {
		return
	}
	var own []Event
	for _, e := range events {
		if e.Type == vocab.TypeSubagentDescriptor && e.Seq >= int64(h.OwnStart()) {
			own = append(own, e)
		}
	}
	switch {
	case len(own) > 1:
		c.add(damagedLog, path, 0, -1, "subagent descriptors at seq %d and seq %d; list shows %s as corrupt", own[0].Seq, own[1].Seq, h.ID)
	case len(own) == 1:
		_, err := descriptor.Parse(own[0].Data)
		switch {
		case errors.Is(err, fault.DescriptorUnsupported):
			c.add(damagedLog, path, 0, -1, "subagent descriptor at seq %d has a version this build does not read (%v); list shows %s as unsupported",
				own[0].Seq, err, h.ID)
		case err != nil:
			c.add(damagedLog, path, 0, -1, "subagent descriptor at seq %d is malformed (%v); list shows %s as corrupt", own[0].Seq, err, h.ID)
		}
	}
}

// readFailure records why a log cannot be read: its header, or its body.
func (c *checker) readFailure(path string, err error) {
	var ce *corruptError
	var ue *unsupportedError
	switch {
	case errors.As(err, &ce) && isHeaderDamage(ce):
		c.add(unreadableHeader, path, 0, ce.FrameAt, "%s", namingPath(ce.Msg, path))
	case errors.As(err, &ce):
		c.add(damagedLog, path, fileLine(ce.Line), ce.FrameAt, "%s", ce.Msg)
	case errors.As(err, &ue) && ue.inBody:
		c.add(damagedLog, path, 0, -1, "%s", ue.Msg)
	case errors.As(err, &ue):
		c.add(unreadableHeader, path, 0, -1, "%s", ue.Msg)
	default:
		c.add(damagedLog, path, 0, -1, "%s: %v", path, err)
	}
}

// isHeaderDamage reports whether a read refused the log for its first
// line or first frame.
func isHeaderDamage(ce *corruptError) bool {
	for _, m := range []string{"header line", "first line", "first frame", "header frame", "header-less",
		"header id cannot name", "retired policy"} {
		if strings.Contains(ce.Msg, m) {
			return true
		}
	}
	return false
}

// cut records the bytes a repairing load would cut from a readable log.
func (c *checker) cut(path string, enc Compression, size int, sc scanned) {
	frameAt := int64(-1)
	if enc == CompressionZstd {
		frameAt = int64(sc.cut) // the torn final frame
	}
	c.add(damagedLog, path, fileLine(sc.firstDropped), frameAt,
		"%s: %d bytes from byte %d on are torn or damaged (a resume cuts them, keeping them in %s.broken)",
		path, size-sc.cut, sc.cut, path)
	c.duplicate(sc.header.ID, path)
}

func (c *checker) duplicate(id, path string) {
	if first, dup := c.ids[id]; dup {
		c.add(damagedLog, path, 0, -1, "%s (%s and %s)", duplicateID(id, path), first, path)
		return
	}
	c.ids[id] = path
}
