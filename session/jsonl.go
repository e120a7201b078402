package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// JSONL is the Store over one root folder of JSONL logs, plain or
// Zstandard-compressed, in the layout of docs/store-format.md. It serializes the writes
// of each log in this process; another process must not write the same
// root concurrently.
type JSONL struct {
	root string
	fs   sessionfs.FS

	logs    sync.Map // id → *logState, never removed: a log's state is stable
	writers *gate    // admits writer rounds until Close, which waits for them

	kept    *fileSlots // logs that keep their file open between writes
	tickets *openBound // bounds the files writers hold open outside kept (see openTickets)

	rootOnce sync.Once
	rootErr  error // the cached verdict of checkRoot

	compression      Compression // decided by checkRoot unless fixedCompression
	fixedCompression bool        // set by WithCompression

	logger *slog.Logger // warns of repairs

	leases *leaseTable  // the sessions' leases (see Acquire)
	dirs   *projectDirs // project folders kept open for reopens and unlinks

	inbox *jsonlInbox // the durable inbox, nil unless WithDurableAdmission

	foldersMu sync.Mutex
	// folders holds the name of every session folder the root scan saw
	// or Create made: an id whose folder is not among them is stored
	// nowhere, so Create refuses it without looking (see refuseExisting).
	folders map[string]bool
}

var _ Fenced = (*JSONL)(nil)

var _ LogLister = (*JSONL)(nil)

// Option configures OpenJSONL.
type Option func(*JSONL)

// WithFS makes the store write through fsys instead of the real file
// system. The file-system seam is this module's own: its tests and
// benchmarks inject write and sync failures through it.
func WithFS(fsys sessionfs.FS) Option { return func(s *JSONL) { s.fs = fsys } }

// WithLogger sets where the store warns of a repair that cut bytes from a
// log (the default is slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *JSONL) { s.logger = l } }

// OpenJSONL opens the store rooted at root (made absolute now; created with
// mode 0700 on the first Create). An existing root must be a directory. It
// does no other I/O and starts no goroutine.
func OpenJSONL(root string, opts ...Option) (*JSONL, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	s := &JSONL{root: abs, fs: sessionfs.OSFS{}, writers: newGate(), logger: slog.Default(), leases: &leaseTable{root: abs}}
	for _, opt := range opts {
		opt(s)
	}
	s.dirs = newProjectDirs(s.fs)
	s.leases.dirs = s.dirs
	if s.kept == nil {
		s.kept = processSlots()
	}
	if s.tickets == nil {
		s.tickets = openTickets()
	}
	info, err := s.fs.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) && s.inbox == nil:
		return s, nil
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !info.IsDir():
		return nil, &fs.PathError{Op: "open session root", Path: abs, Err: errNotDir}
	}
	if err := s.settleAdmissionMode(); err != nil {
		return nil, err
	}
	return s, nil
}

var errNotDir = errors.New("not a directory")

// Root returns the absolute root folder.
func (s *JSONL) Root() string { return s.root }

// List reads only the first line of every log and returns the valid
// headers in file-system order. A folder without a valid header line is
// skipped; a flat <project>/*.jsonl file, a compressed artifact, a header
// stored at a path it does not identify, or an id stored twice is an error.
func (s *JSONL) List(ctx context.Context) ([]Header, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := s.checkRoot(ctx); err != nil {
		return nil, err
	}
	projects, err := s.projectDirs(ctx)
	if err != nil {
		return nil, err
	}
	l := lister{s: s, buf: make([]byte, 4096), seen: map[string]string{}, projects: map[string]string{}}
	for _, project := range projects {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := l.project(project); err != nil {
			return nil, err
		}
	}
	return l.out, nil
}

// ListLogs lists the store as List does, reading each log once, whole:
// for each listed session, in listing order, it calls fn with the header
// and what Inspect of that session returns (its log, or the error reading
// it: damage in one log fails only that log). It stops at the listing's
// first error or fn's and returns it. It blocks on the file system and on
// fn.
func (s *JSONL) ListLogs(ctx context.Context, fn func(h Header, log *Log, err error) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.checkRoot(ctx); err != nil {
		return err
	}
	projects, err := s.projectDirs(ctx)
	if err != nil {
		return err
	}
	l := lister{s: s, buf: make([]byte, 4096), seen: map[string]string{}, projects: map[string]string{}, whole: fn}
	for _, project := range projects {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := l.project(project); err != nil {
			return err
		}
	}
	return nil
}

// projectDirs returns the project folders under the root (symlinks are not
// followed); a missing root has none.
func (s *JSONL) projectDirs(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := s.fs.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(s.root, e.Name()))
		}
	}
	return dirs, nil
}

// lister is one List call: its results, the ids seen so far, one read
// buffer reused for every first line, and the project folder of each cwd.
type lister struct {
	s        *JSONL
	buf      []byte
	plain    []byte // the decoded first frame (Zstandard)
	out      []Header
	seen     map[string]string // id → path
	projects map[string]string // cwd → project folder
	// whole, when set (ListLogs), reads each log whole and is called with
	// each listed session's inspected log.
	whole func(Header, *Log, error) error
}

func (l *lister) project(project string) error { return l.s.sessionDirs(project, l.session) }

// sessionDirs calls fn with the path of every session folder in project,
// in directory order, stopping at the first error. A log file lying
// directly in project (the flat layout) is refused; other files are
// skipped.
func (s *JSONL) sessionDirs(project string, fn func(path string) error) error {
	entries, err := s.fs.ReadDir(project)
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(project, e.Name())
		if !e.IsDir() {
			if e.Type().IsRegular() && isLogArtifact(e.Name()) {
				return flatLayout(path)
			}
			continue
		}
		if err := fn(path); err != nil {
			return err
		}
	}
	return nil
}

func isLogArtifact(name string) bool {
	return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.zstd")
}

// session reads the header of one session folder; a folder without a log
// or whose first line is not a valid header is skipped.
func (l *lister) session(dir string) error {
	path := filepath.Join(dir, l.s.logName())
	var line, buf []byte
	var err error
	if l.whole == nil {
		line, err = l.firstLine(path)
	} else {
		line, buf, err = l.wholeFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return l.s.checkOpposite(dir)
	}
	if err != nil || line == nil {
		return err
	}
	hl, _ := parseHeaderLine(line)
	if !hl.listable {
		return nil
	}
	if err := hl.listingError(path); err != nil {
		return err
	}
	if hl.lone != "" {
		return nil // check reports it; reading it as another id could list it under another's name
	}
	h := hl.header
	if err := l.checkIdentity(h, path); err != nil {
		return err
	}
	if first, dup := l.seen[h.ID]; dup {
		return duplicateID(h.ID, first)
	}
	l.seen[h.ID] = path
	l.out = append(l.out, h)
	if l.whole == nil {
		return nil
	}
	sc, err := l.s.inspectBytes(h.ID, path, buf)
	if err != nil {
		return l.whole(h, nil, err)
	}
	return l.whole(h, &Log{Header: sc.header, Events: sc.events}, nil)
}

// wholeFile reads the file at path whole and returns its first line as
// firstLine does (aliasing the lister's buffers) with the file's bytes.
func (l *lister) wholeFile(path string) (line, buf []byte, err error) {
	if buf, err = l.s.fs.ReadFile(path); err != nil {
		return nil, nil, err
	}
	found := l.lineFound
	if l.s.compression == CompressionZstd {
		found = l.frameFound(path)
	}
	saved := l.buf
	l.buf = buf
	line, _, err = found(0, len(buf))
	l.buf = saved
	return line, buf, err
}

// checkIdentity is JSONL.checkIdentity with the project folder of each cwd
// computed once per listing.
func (l *lister) checkIdentity(h Header, path string) error {
	project, ok := l.projects[h.Cwd]
	seg, err := logpath.EncodeSegment(h.ID)
	if !ok && err == nil {
		project, err = logpath.ProjectDir(l.s.root, h.Cwd)
		l.projects[h.Cwd] = project
	}
	if err == nil && filepath.Join(project, seg, l.s.logName()) == path {
		return nil
	}
	return l.s.checkIdentity(h, "", path)
}

// firstLine returns the first line of a file without its LF (aliasing the
// lister's buffers until the next call), or nil when the file has no
// complete first line (Zstandard: no complete first frame).
func (l *lister) firstLine(path string) ([]byte, error) {
	f, err := l.s.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	found := l.lineFound
	if l.s.compression == CompressionZstd {
		found = l.frameFound(path)
	}
	n := 0
	for {
		if n == len(l.buf) {
			l.buf = append(l.buf, make([]byte, len(l.buf))...)
		}
		m, err := f.Read(l.buf[n:])
		line, ok, ferr := found(n, n+m)
		if ok || ferr != nil {
			return line, ferr
		}
		n += m
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// lineFound looks for the first LF in the bytes read so far, of which
// buf[from:to] are new.
func (l *lister) lineFound(from, to int) ([]byte, bool, error) {
	if i := bytes.IndexByte(l.buf[from:to], '\n'); i >= 0 {
		return l.buf[:from+i], true, nil
	}
	return nil, false, nil
}

// frameFound looks for a complete first frame in the bytes read so far
// and returns its single header line. One log's damage never fails the
// listing of the whole store: a first frame that fails validation yields
// the header line its blocks still decode to (reading that log then fails,
// naming the damage), and one that does not decode to a single line, or
// is not a frame at all, is skipped as a non-header first line is. A
// frame that passes validation but holds more than one line is an error.
func (l *lister) frameFound(path string) func(from, to int) ([]byte, bool, error) {
	return func(_, to int) ([]byte, bool, error) {
		scan, err := scanFrames(l.buf[:to], 1, path)
		if err != nil {
			return nil, true, nil
		}
		if len(scan.frames) == 0 {
			return nil, false, nil
		}
		l.plain, err = sharedDecoder.DecodeAll(l.buf[:scan.frames[0].end], l.plain[:0])
		if err != nil {
			l.plain = appendTornPrefix(l.plain[:0], l.buf[:scan.frames[0].end], 0)
			if checkHeaderFrame(l.plain, path) != nil {
				return nil, true, nil
			}
		}
		if err := checkHeaderFrame(l.plain, path); err != nil {
			return nil, false, err
		}
		return l.plain[:len(l.plain)-1], true, nil
	}
}

// checkIdentity binds a header to its file: a targeted read requires the
// header id to be the requested one, and the header's id and cwd must
// identify path.
func (s *JSONL) checkIdentity(h Header, requested, path string) error {
	if requested != "" && h.ID != requested {
		return otherSession(path, requested, h.ID)
	}
	expected, err := logpath.Path(s.root, h.Cwd, h.ID)
	if err != nil {
		return corruptNamed(path, `corrupt session log "%s": header id cannot name a storage path`, path)
	}
	expected = filepath.Join(filepath.Dir(expected), filepath.Base(path)) // the file name is the encoding's
	if expected == path {
		return nil
	}
	if same, err := sameRealPath(path, expected); same || err != nil {
		return err
	}
	return corruptNamed(path, `corrupt session log "%s": header id "%s" and cwd identify "%s"`, path, h.ID, expected)
}

// otherSession is the refusal of a log read as requested whose header
// names another session, headerID.
func otherSession(path, requested, headerID string) error {
	return corruptNamed(path, `corrupt session log "%s": requested id "%s" does not match header id "%s"`,
		path, requested, headerID)
}

// sameRealPath reports whether two spellings resolve to the same file
// (the original's realpath comparison: a project folder that is a symlink
// to the log's real folder identifies it); a missing path is not the same.
func sameRealPath(a, b string) (bool, error) {
	realA, err := filepath.EvalSymlinks(a)
	if err == nil {
		var realB string
		if realB, err = filepath.EvalSymlinks(b); err == nil {
			return realA == realB, nil
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

func duplicateID(id, path string) error {
	return corruptNamed(path, `duplicate JSONL session id "%s" appears in multiple project directories`, id)
}

func flatLayout(path string) error {
	return &unsupportedError{Path: path, Msg: fmt.Sprintf(`session artifact "%s" uses the unsupported flat-file layout; `+
		`a log must live at <project>/<encoded id>/%s`, path, logpath.FileName)}
}

// checkRoot refuses a root holding a flat-layout log or logs of both
// encodings, as the original's once-per-backend root encoding check does
// before any lookup: the first call scans every project and session folder
// (deciding the store's encoding, see scanRoot), and its verdict (a
// refusal included) is kept for the life of the store, so later strays are
// caught only by List.
func (s *JSONL) checkRoot(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.rootOnce.Do(func() { s.rootErr = s.scanRoot() })
	return s.rootErr
}

// find locates the log of id across every project folder. It refuses the
// flat layout and compressed artifacts for that id, and an id stored in
// more than one project folder; a missing log is ErrNotFound.
func (s *JSONL) find(ctx context.Context, id string) (string, error) {
	seg, err := logpath.EncodeSegment(id)
	if err != nil {
		return "", notFound(id)
	}
	if err := s.checkRoot(ctx); err != nil {
		return "", err
	}
	projects, err := s.projectDirs(ctx)
	if err != nil {
		return "", err
	}
	found := ""
	for _, project := range projects {
		path, err := s.findIn(project, seg)
		if err != nil {
			return "", err
		}
		if path != "" && found != "" {
			return "", duplicateID(id, found)
		}
		if path != "" {
			found = path
		}
	}
	if found == "" {
		return "", notFound(id)
	}
	return found, nil
}

// findIn returns the log of the encoded id in one project folder, or "".
func (s *JSONL) findIn(project, seg string) (string, error) {
	for _, flat := range []string{seg + ".jsonl", seg + ".jsonl.zstd"} {
		if info, err := s.fs.Stat(filepath.Join(project, flat)); err == nil && info.Mode().IsRegular() {
			return "", flatLayout(filepath.Join(project, flat))
		}
	}
	path := filepath.Join(project, seg, s.logName())
	_, err := s.fs.Stat(path)
	switch {
	case err == nil:
		return path, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	return "", s.checkOpposite(filepath.Join(project, seg))
}

// read locates, reads and scans the log of id without writing anything.
func (s *JSONL) read(ctx context.Context, id string) (string, []byte, scanned, error) {
	path, err := s.find(ctx, id)
	if err != nil {
		return "", nil, scanned{}, err
	}
	buf, err := s.fs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, scanned{}, notFound(id)
	}
	if err != nil {
		return "", nil, scanned{}, err
	}
	sc, err := s.inspectBytes(id, path, buf)
	return path, buf, sc, err
}

// inspectBytes scans buf, the whole log of id read from path, and checks
// it as a targeted read does: the header identifies id at path, and every
// event can be interpreted (checkEvents).
func (s *JSONL) inspectBytes(id, path string, buf []byte) (scanned, error) {
	sc, err := s.scan(buf, path)
	if err == nil {
		err = s.checkIdentity(sc.header, id, path)
	}
	if err == nil {
		err = checkEvents(id, sc, path)
	}
	return sc, err
}

// checkEvents refuses a scanned log a read cannot interpret: a retired
// vocabulary, a type unknown to this build and not marked ignorable, a
// malformed message, an invalid event envelope.
func checkEvents(id string, sc scanned, path string) error {
	events := sc.events
	if msg, legacy := legacyEvent(id, events); legacy {
		return corruptf(path, 0, "%s", msg)
	}
	if err := unknownEvent(id, events, path); err != nil {
		return err
	}
	if err := checkMessages(id, events, path); err != nil {
		return err
	}
	return checkEnvelope(id, events, sc.badEnvelope, path)
}

// checkEnvelope refuses the log of id when its kept event at index
// badEnvelope-1 has an envelope the original refuses (a key other than
// type, seq, time, data, sourceEventSeqs, surfaceOp, ignorable, a type
// that is not a string, no data, a time that is not a safe integer, or an
// ignorable other than true), in the original's words, with the events
// before it as the readable prefix. badEnvelope 0: none has.
func checkEnvelope(id string, events []Event, badEnvelope int, path string) error {
	if badEnvelope == 0 {
		return nil
	}
	i := badEnvelope - 1
	refused := corruptf(path, 0, `stored session "%s" failed validation: seed event at index %d has an invalid event envelope`, id, i)
	return withReadable(refused, events[:i:i])
}

// scan reads a whole log in the store's encoding.
func (s *JSONL) scan(buf []byte, path string) (scanned, error) {
	return scanAs(s.compression, buf, path)
}

// scanAs reads a whole log in the encoding enc.
func scanAs(enc Compression, buf []byte, path string) (scanned, error) {
	if enc == CompressionZstd {
		return scanZstdLog(buf, path)
	}
	return scanLog(buf, path)
}

// Inspect returns the valid stored prefix of id exactly as stored: no torn
// tail truncation and no closers. It opens the file read-only and never
// writes. The returned events share one buffer; do not modify them.
func (s *JSONL) Inspect(ctx context.Context, id string) (*Log, error) {
	log, _, _, err := s.InspectTail(ctx, id)
	return log, err
}

// InspectTail is Inspect, and also says what Inspect left out at the end
// of the log's file: the size-cut bytes from byte cut on, a torn tail (or
// damage in an unfinished last turn) that a resume would cut, as check
// reports them; cut == size when nothing was left out. It never writes.
func (s *JSONL) InspectTail(ctx context.Context, id string) (log *Log, cut, size int, err error) {
	if err := s.checkOpen(); err != nil {
		return nil, 0, 0, err
	}
	_, buf, sc, err := s.read(ctx, id)
	if err != nil {
		return nil, 0, 0, err
	}
	return &Log{Header: sc.header, Events: sc.events}, sc.cut, len(buf), nil
}

// Load is the repairing read. It waits until no write of id is in flight,
// reads the log, refuses one the original cannot build a session from (a
// relative cwd, events that break the surface rules: ErrCorrupt, nothing
// written), truncates a torn tail (and fsyncs), then durably appends
// the closers of an open final turn (tool/result per pending call, step/end,
// turn/end {kind:"interrupted"}) and returns the balanced log. Later
// appends must continue at len(Events). A failed log is re-established
// first (cut back to its last acknowledged size and synced); only when
// that fails does Load return ErrLogFailed.
func (s *JSONL) Load(ctx context.Context, id string) (*Log, error) {
	st, err := s.state(id)
	if err != nil {
		return nil, err
	}
	st.op.Lock()
	defer st.op.Unlock()
	return s.loadLocked(ctx, st)
}

// loadLocked reads (and repairs) the log as it is on disk now. A file the
// log kept from before is closed first: the path may name another file by
// now (a restored copy), and the next write opens the one that was read.
// A log whose lease another process holds is refused (fault.LeaseHeld):
// its writer may be mid-batch, and a repair would cut its bytes.
func (s *JSONL) loadLocked(ctx context.Context, st *logState) (*Log, error) {
	done, err := s.holdForRepair(ctx, st)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := s.reestablish(st); err != nil {
		return nil, err
	}
	if err := st.quiesce(); err != nil {
		return nil, err
	}
	s.dropFile(st)
	path, buf, sc, err := s.read(ctx, st.id)
	if err == nil {
		err = checkResumable(sc.header, sc.events, path)
	}
	if err != nil {
		return nil, err
	}
	closers := interruptedTurnClosers(sc.events)
	size := int64(len(buf))
	if sc.cut < len(buf) || len(closers) > 0 {
		if size, err = s.repair(st, path, buf, sc, closers); err != nil {
			return nil, err
		}
	}
	events := append(sc.events, closers...)
	st.ready(path, int64(len(events)), size)
	return &Log{Header: sc.header, Events: events}, nil
}

// repair cuts the file read as buf to sc.cut, keeping the bytes it
// removes in <log>.broken first (see keepBroken), then appends the lines a
// torn frame still held and the closers as one durable batch (one frame
// in a Zstandard log). It returns the new file size; a failure puts the
// log in the failed state.
func (s *JSONL) repair(st *logState, path string, buf []byte, sc scanned, closers []Event) (int64, error) {
	f, err := s.fs.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size := int64(sc.cut)
	if sc.cut < len(buf) {
		if err := s.keepBroken(path, buf[sc.cut:]); err != nil {
			return 0, st.fail(err)
		}
		if err := truncateDurably(f, size); err != nil {
			return 0, st.fail(err)
		}
	}
	data := append([]byte(nil), sc.recovered...)
	for _, e := range closers {
		data = append(appendEvent(data, e, true), '\n')
	}
	if len(data) == 0 {
		return size, nil
	}
	data = s.frame(nil, data)
	if err := appendDurably(f, size, data); err != nil {
		return 0, st.fail(err)
	}
	return size + int64(len(data)), nil
}

// frame returns lines as the store writes one durable batch: as they
// are, or as one Zstandard frame appended to dst.
func (s *JSONL) frame(dst, lines []byte) []byte {
	if s.compression == CompressionZstd {
		return appendFrame(dst, lines)
	}
	return lines
}

// Create materializes a new log: header plus seed, written to a temporary
// file (O_EXCL, 0600), fsynced, hard-linked into place (never replacing an
// existing file) and the folder fsynced. It refuses an id that is already
// stored anywhere under the root.
func (s *JSONL) Create(ctx context.Context, h Header, seed []Event) error {
	if err := validateNewHeader(h); err != nil {
		return err
	}
	data, err := encodeBatch(h.ID, 0, seed, append(appendHeader(nil, h), '\n'))
	if err != nil {
		return err
	}
	st, err := s.state(h.ID)
	if err != nil {
		return err
	}
	st.op.Lock()
	defer st.op.Unlock()
	if err := s.refuseExisting(ctx, st); err != nil {
		return err
	}
	path, err := s.logPath(h.Cwd, h.ID)
	if err != nil {
		return err
	}
	data = s.firstFrames(data)
	f, err := s.materialize(path, data)
	if err != nil {
		return err
	}
	s.addFolder(filepath.Base(filepath.Dir(path)))
	st.ready(path, int64(len(seed)), int64(len(data)))
	s.keep(st, f)
	return nil
}

// firstFrames is a new log's content (the header line, then the seed's
// lines) as the store writes it: as it is, or as a header frame followed,
// when there is a seed, by one frame of the seed's lines.
func (s *JSONL) firstFrames(data []byte) []byte {
	if s.compression != CompressionZstd {
		return data
	}
	headerEnd := bytes.IndexByte(data, '\n') + 1
	out := appendFrame(nil, data[:headerEnd])
	if headerEnd < len(data) {
		out = appendFrame(out, data[headerEnd:])
	}
	return out
}

// refuseExisting refuses an id that is live here or stored anywhere under
// the root. Only an id whose folder name the root scan saw (or Create
// made) is looked for on disk, so creating a new id costs no directory
// scan; a folder another process makes after the scan is found only by
// the link that publishes the log (another process must not write the
// same root concurrently).
func (s *JSONL) refuseExisting(ctx context.Context, st *logState) error {
	if st.isReady() {
		return existsf(`session "%s" already exists in this backend`, st.id)
	}
	if err := s.checkRoot(ctx); err != nil {
		return err
	}
	if seg, err := logpath.EncodeSegment(st.id); err == nil && !s.hasFolder(seg) {
		return nil
	}
	_, err := s.find(ctx, st.id)
	switch {
	case err == nil:
		return existsf(`session "%s" already has a persisted log on disk; load/resume it instead of creating`, st.id)
	case errors.Is(err, ErrNotFound):
		return nil
	}
	return err
}
