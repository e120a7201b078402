package session

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/faultfs"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// countFS counts the files opened through it, per name, and the closes of
// those files; a file created under a temporary name (Create's
// <path>.<hex>.tmp) is counted under the log path it is linked to. It can
// fail the next opens of a name with EMFILE, as a process out of
// descriptors does.
type countFS struct {
	sessionfs.FS

	mu      sync.Mutex
	opens   map[string]int // successful OpenFile calls per name
	closes  map[string]int // Close calls per log path (temporary names folded)
	live    map[*countFile]bool
	emfile  map[string]int // name → opens left to fail with EMFILE
	refused map[string]int // opens failed with EMFILE per name
	double  int            // Close calls on an already closed file
	peak    int            // the most files open at once since resetPeak
	slow    time.Duration  // how long each Sync of a file opened here waits first
}

func newCountFS(base sessionfs.FS) *countFS {
	if base == nil {
		base = sessionfs.OSFS{}
	}
	return &countFS{
		FS: base, opens: map[string]int{}, closes: map[string]int{}, live: map[*countFile]bool{},
		emfile: map[string]int{}, refused: map[string]int{},
	}
}

func (c *countFS) OpenFile(name string, flag int, perm fs.FileMode) (sessionfs.File, error) {
	c.mu.Lock()
	if c.emfile[name] > 0 {
		c.emfile[name]--
		c.refused[name]++
		c.mu.Unlock()
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EMFILE}
	}
	c.mu.Unlock()
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	cf := &countFile{File: f, fs: c, log: logOfName(name)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opens[name]++
	c.live[cf] = true
	c.peak = max(c.peak, len(c.live))
	return cf, nil
}

// logOfName folds a temporary name <path>.<12 hex>.tmp into path.
func logOfName(name string) string {
	if base, ok := strings.CutSuffix(name, ".tmp"); ok {
		if i := strings.LastIndexByte(base, '.'); i >= 0 {
			return base[:i]
		}
	}
	return name
}

// failOpens makes the next n opens of name fail with EMFILE.
func (c *countFS) failOpens(name string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.emfile[name] = n
}

// opened is how many times path itself was opened (not counting the
// temporary file Create writes it through).
func (c *countFS) opened(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[path]
}

// closed is how many files of the log at path were closed.
func (c *countFS) closed(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closes[path]
}

// openNow lists the log path of every file opened and not yet closed.
func (c *countFS) openNow() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for f := range c.live {
		out = append(out, f.log)
	}
	return out
}

// refusedOpens is how many opens of name failed with EMFILE.
func (c *countFS) refusedOpens(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused[name]
}

func (c *countFS) doubleCloses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.double
}

type countFile struct {
	sessionfs.File
	fs  *countFS
	log string
}

// resetPeak starts counting the most files open at once anew.
func (c *countFS) resetPeak() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.peak = len(c.live)
}

func (c *countFS) peakOpen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

// Sync waits the FS's slow duration, then syncs.
func (f *countFile) Sync() error {
	f.fs.mu.Lock()
	slow := f.fs.slow
	f.fs.mu.Unlock()
	time.Sleep(slow)
	return f.File.Sync()
}

func (f *countFile) Close() error {
	f.fs.mu.Lock()
	if !f.fs.live[f] {
		f.fs.double++
	}
	delete(f.fs.live, f)
	f.fs.closes[f.log]++
	f.fs.mu.Unlock()
	return f.File.Close()
}

// keptStore opens a store over a fresh countFS with opts and checks at the
// end of the test that Close left no file open and closed none twice.
func keptStore(t *testing.T, opts ...Option) (*JSONL, *countFS) {
	t.Helper()
	counts := newCountFS(nil)
	s, err := OpenJSONL(t.TempDir(), append([]Option{WithFS(counts)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		require.Empty(t, counts.openNow(), "Close closes every kept file")
		require.Zero(t, counts.doubleCloses(), "no file is closed twice")
	})
	return s, counts
}

// createLog creates log id with two seed events and returns its path.
func createLog(t *testing.T, s *JSONL, id string) string {
	t.Helper()
	h := header(id)
	require.NoError(t, s.Create(context.Background(), h, turnEvents(0, 2)))
	return logPathOf(t, s, h)
}

// appendN appends n single-event batches to id, whose next seq is first,
// and returns the seq after them.
func appendN(t *testing.T, s *JSONL, id string, first int64, n int) int64 {
	t.Helper()
	for i := range n {
		require.NoError(t, s.Append(context.Background(), id, turnEvents(first+int64(i), 1)))
	}
	return first + int64(n)
}

// requireStored checks that id holds exactly seqs 0..n-1 on disk.
func requireStored(t *testing.T, s *JSONL, id string, n int) {
	t.Helper()
	log, err := s.Inspect(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, turnEvents(0, n), log.Events)
}

func TestCreatedLogAppendsThroughItsCreateDescriptor(t *testing.T) {
	s, counts := keptStore(t)
	path := createLog(t, s, "k")
	require.Equal(t, []string{path}, counts.openNow(), "Create keeps the descriptor it wrote the header with")
	require.Zero(t, counts.closed(path))

	appendN(t, s, "k", 2, 5)
	require.Zero(t, counts.opened(path), "no append opened the log: they all wrote through the kept descriptor")
	require.Zero(t, counts.closed(path), "and none closed it")
	requireStored(t, s, "k", 7)
	entries, err := os.ReadDir(strings.TrimSuffix(path, "/"+logpath.FileName))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the temporary name is gone; the kept descriptor writes the linked log")
}

func TestLoadedLogKeepsTheFileOfItsFirstWrite(t *testing.T) {
	counts := newCountFS(nil)
	root := t.TempDir()
	{
		s, err := OpenJSONL(root)
		require.NoError(t, err)
		createLog(t, s, "k")
		require.NoError(t, s.Close())
	}
	s, err := OpenJSONL(root, WithFS(counts))
	require.NoError(t, err)
	defer s.Close()
	path := logPathOf(t, s, header("k"))
	appendN(t, s, "k", 2, 4) // the first append adopts the log with a Load
	require.Equal(t, 1, counts.opened(path), "the first write opens the log, later ones reuse it")
	require.Zero(t, counts.closed(path))
	require.Equal(t, []string{path}, counts.openNow())
	require.NoError(t, s.Close())
	require.Empty(t, counts.openNow())
	requireStored(t, readStore(t, root), "k", 6)
}

// readStore opens a second, plain store over root for reading.
func readStore(t *testing.T, root string) *JSONL {
	t.Helper()
	s, err := OpenJSONL(root)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestNoKeptFilesReopensEveryBatch(t *testing.T) {
	s, counts := keptStore(t, withKeptFiles(0))
	path := createLog(t, s, "z")
	require.Empty(t, counts.openNow(), "Create closes its descriptor when no file may be kept")
	require.Equal(t, 1, counts.closed(path))

	appendN(t, s, "z", 2, 4)
	require.Equal(t, 4, counts.opened(path), "one open per batch")
	require.Equal(t, 1+4, counts.closed(path), "one close per batch")
	require.Empty(t, counts.openNow())
	requireStored(t, s, "z", 6)
}

func TestKeptFilesAreBoundedBySlots(t *testing.T) {
	s, counts := keptStore(t, withKeptFiles(1))
	a := createLog(t, s, "a")
	b := createLog(t, s, "b")
	require.Equal(t, []string{a}, counts.openNow(), "only the first log got the slot")
	require.Equal(t, 1, counts.closed(b), "the second closed its Create descriptor")

	appendN(t, s, "a", 2, 3)
	appendN(t, s, "b", 2, 3)
	require.Zero(t, counts.opened(a), "the slot holder writes through its kept file")
	require.Equal(t, 3, counts.opened(b), "the other log reopens per batch")
	require.Equal(t, 1+3, counts.closed(b))

	s.releaseLog("a")
	require.Zero(t, counts.closed(a), "releaseLog leaves the file open")
	require.Equal(t, []string{a}, counts.openNow())

	appendN(t, s, "b", 5, 3)
	require.Equal(t, 1, counts.closed(a), "the next log that needs a slot takes the released one, closing its file")
	require.Equal(t, 4, counts.opened(b), "b opened once more")
	require.Equal(t, 1+3, counts.closed(b), "and kept that file")
	require.Equal(t, []string{b}, counts.openNow())

	appendN(t, s, "a", 5, 2)
	require.Equal(t, 2, counts.opened(a), "a released log reopens per batch")
	require.Equal(t, 1+2, counts.closed(a), "and keeps nothing")
	require.Equal(t, []string{b}, counts.openNow())
	requireStored(t, s, "a", 7)
	requireStored(t, s, "b", 8)
}

func TestReleaseLogKeepsTheFileUntilItsSlotIsNeeded(t *testing.T) {
	s, counts := keptStore(t)
	path := createLog(t, s, "r")
	appendN(t, s, "r", 2, 2)

	s.releaseLog("r")
	s.releaseLog("r")
	s.releaseLog("unknown")
	require.Zero(t, counts.closed(path), "a release closes nothing; a second one and an unknown id are no-ops")
	require.Equal(t, []string{path}, counts.openNow())

	appendN(t, s, "r", 4, 2)
	require.Zero(t, counts.opened(path), "a released log still appends through its kept file")
	requireStored(t, s, "r", 6)

	_, err := s.Load(context.Background(), "r")
	require.NoError(t, err)
	require.Equal(t, 1, counts.closed(path), "Load closes the kept file: the next write opens the file it read")
	appendN(t, s, "r", 6, 3)
	require.Equal(t, 1, counts.opened(path), "once, and keeps it")
	require.Equal(t, []string{path}, counts.openNow())
	requireStored(t, s, "r", 9)
}

// A log loaded again after its release is no longer evictable: a log that
// needs a slot finds none.
func TestAResumedLogKeepsItsSlot(t *testing.T) {
	s, counts := keptStore(t, withKeptFiles(1))
	a := createLog(t, s, "a")
	s.releaseLog("a")
	_, err := s.Load(context.Background(), "a")
	require.NoError(t, err)
	appendN(t, s, "a", 2, 1)
	b := createLog(t, s, "b")
	require.Equal(t, []string{a}, counts.openNow(), "a keeps its slot")
	require.Equal(t, 1, counts.closed(b), "b found none")
}

func TestCloseClosesEveryKeptFile(t *testing.T) {
	counts := newCountFS(nil)
	s, err := OpenJSONL(t.TempDir(), WithFS(counts))
	require.NoError(t, err)
	paths := []string{createLog(t, s, "c1"), createLog(t, s, "c2"), createLog(t, s, "c3")}
	appendN(t, s, "c2", 2, 2)
	require.ElementsMatch(t, paths, counts.openNow())

	require.NoError(t, s.Close())
	require.Empty(t, counts.openNow(), "no descriptor outlives Close")
	for _, p := range paths {
		require.Equal(t, 1, counts.closed(p), p)
	}
	require.NoError(t, s.Close(), "idempotent")
	require.Zero(t, counts.doubleCloses())
	err = s.Append(context.Background(), "c1", turnEvents(2, 1))
	require.ErrorIs(t, err, errClosed)
}

func TestFailedSyncClosesTheKeptFile(t *testing.T) {
	counts := newCountFS(nil)
	faults := faultfs.New(counts)
	s, err := OpenJSONL(t.TempDir(), WithFS(faults))
	require.NoError(t, err)
	defer s.Close()
	h := header("f")
	require.NoError(t, s.Create(context.Background(), h, turnEvents(0, 2)))
	path := logPathOf(t, s, h)
	appendN(t, s, "f", 2, 1)
	require.Equal(t, []string{path}, counts.openNow())

	faults.FailSync(1, syscall.EIO)
	err = s.Append(context.Background(), "f", turnEvents(3, 2))
	require.ErrorIs(t, err, ErrLogFailed)
	require.ErrorIs(t, err, syscall.EIO)
	require.Empty(t, counts.openNow(), "the failed log's kept file is closed")
	require.Equal(t, 1, counts.closed(path))

	requireFailedLog(t, s, syscall.EIO)
	require.Zero(t, counts.opened(path), "refused appends open nothing")
	require.Empty(t, counts.openNow())
	log, err := s.Inspect(context.Background(), "f")
	require.NoError(t, err)
	require.Equal(t, turnEvents(0, 3), log.Events, "the failed batch was rolled back through the kept file")
}

func TestOutOfDescriptorsShedsKeptFilesAndRetries(t *testing.T) {
	s, counts := keptStore(t, withKeptFiles(3))
	kept := []string{createLog(t, s, "k1"), createLog(t, s, "k2"), createLog(t, s, "k3")}
	d := createLog(t, s, "d") // no slot left: d reopens per batch
	require.ElementsMatch(t, kept, counts.openNow())

	counts.failOpens(d, 1)
	require.NoError(t, s.Append(context.Background(), "d", turnEvents(2, 1)), "the open is retried after shedding")
	require.Equal(t, 1, counts.refusedOpens(d))
	require.Equal(t, 1, counts.opened(d))
	for _, p := range kept {
		require.Equal(t, 1, counts.closed(p), "every idle kept file was closed: %s", p)
	}
	require.Equal(t, []string{d}, counts.openNow(), "d took one of the slots the shedding freed")
	requireStored(t, s, "d", 3)

	// The budget is halved (3 kept → 1), and d holds that one slot now.
	appendN(t, s, "k1", 2, 2)
	require.Equal(t, 2, counts.opened(kept[0]), "k1 lost its slot and reopens per batch")
	require.Equal(t, 1+2, counts.closed(kept[0]))
	require.Equal(t, []string{d}, counts.openNow())
	appendN(t, s, "d", 3, 2)
	require.Equal(t, 1, counts.opened(d), "d keeps its file")
	requireStored(t, s, "k1", 4)
	requireStored(t, s, "d", 5)
}

func TestOutOfDescriptorsTwiceFailsTheAppend(t *testing.T) {
	s, counts := keptStore(t, withKeptFiles(0))
	createLog(t, s, "e")
	path := logPathOf(t, s, header("e"))
	counts.failOpens(path, 2)
	err := s.Append(context.Background(), "e", turnEvents(2, 1))
	require.ErrorIs(t, err, syscall.EMFILE, "one retry only")
	require.Equal(t, 2, counts.refusedOpens(path))
	requireStored(t, s, "e", 2)
}

func TestSessionsReleaseClosesTheKeptFile(t *testing.T) {
	ctx := context.Background()
	s, counts := keptStore(t)
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("live"), nil)
	require.NoError(t, err)
	path := logPathOf(t, s, header("live"))
	for i := range 3 {
		_, err := l.Append("feedback/record", map[string]int{"i": i})
		require.NoError(t, err)
	}
	ok, err := reg.Flush(ctx, l)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []string{path}, counts.openNow(), "the live session's log keeps its file")
	require.Zero(t, counts.opened(path))

	require.NoError(t, reg.Release(ctx, l))
	require.Equal(t, []string{path}, counts.openNow(), "Release leaves the file open")

	again, err := reg.Resume(ctx, "live")
	require.NoError(t, err)
	ok, err = reg.Flush(ctx, again) // the end-seed marker
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, counts.opened(path), "the resumed session reopens the file it read, once")
	require.NoError(t, reg.Release(ctx, again))
	require.Equal(t, 1, counts.closed(path), "only the file dropped by the resume was closed")
}

// Sessions.Release tells the store the log is released: its slot goes to
// the next log that needs one.
func TestSessionsReleaseGivesUpTheSlot(t *testing.T) {
	ctx := context.Background()
	s, counts := keptStore(t, withKeptFiles(1))
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("one"), nil)
	require.NoError(t, err)
	one := logPathOf(t, s, header("one"))
	require.NoError(t, reg.Release(ctx, l))
	two := createLog(t, s, "two")
	require.Equal(t, 1, counts.closed(one), "one's file was closed for two")
	require.Equal(t, []string{two}, counts.openNow())
}

// A release that meets a running write leaves the file to the writer,
// which keeps it evictable: the slot is not lost (it once stayed held
// until Close, shrinking the budget by one per such release).
// Sessions.Release reaches this when its flush is cut short by ctx.
func TestReleaseDuringAWriteFreesTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		counts := newCountFS(nil)
		gates := faultfs.New(counts)
		s, err := OpenJSONL(t.TempDir(), WithFS(gates), withKeptFiles(1))
		require.NoError(t, err)
		defer s.Close()
		defer gates.ReleaseSyncs() // before Close, should the test fail with the gate shut
		reg := NewSessions(s)
		l, err := reg.Create(context.Background(), header("a"), nil)
		require.NoError(t, err)
		require.Len(t, counts.openNow(), 1, "a holds the only slot")

		gates.HoldSyncs()
		_, err = l.Append("feedback/record", nil)
		require.NoError(t, err)
		synctest.Wait() // a's writer holds its kept file, syncing
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, reg.Release(ctx, l), context.Canceled)
		gates.ReleaseSyncs()
		synctest.Wait() // the flusher and the writer are gone
		require.Len(t, counts.openNow(), 1, "the writer kept the released log's file")

		b := createLog(t, s, "b")
		appendN(t, s, "b", 2, 2)
		require.Equal(t, []string{b}, counts.openNow(), "the released slot went to b, closing a's file")
		require.Zero(t, counts.opened(b), "b writes through its Create descriptor")
	})
}

// A Create still materializing while Close runs must not keep its
// descriptor: Close waits for writers only, so keep checks that the store
// is open (it once leaked the descriptor until a second Close).
func TestCreateRacingCloseKeepsNoFile(t *testing.T) {
	counts := newCountFS(nil)
	gates := faultfs.New(counts)
	s, err := OpenJSONL(t.TempDir(), WithFS(gates))
	require.NoError(t, err)
	defer s.Close()
	defer gates.ReleaseSyncs()
	held := gates.HoldSyncs()
	created := make(chan error, 1)
	go func() { created <- s.Create(context.Background(), header("late"), turnEvents(0, 1)) }()
	<-held // Create is syncing its temporary file
	require.NoError(t, s.Close())
	gates.ReleaseSyncs()
	<-created // whatever Create reports, it must not leave a file open
	require.Empty(t, counts.openNow(), "no descriptor outlives Close")
}

// Logs created, appended to, released and loaded again from many
// goroutines over a small budget never keep more files than slots, lose
// no append and leave nothing open after Close.
func TestKeptFilesUnderConcurrentReleases(t *testing.T) {
	const logs, rounds, slots = 16, 6, 4
	s, counts := keptStore(t, withKeptFiles(slots))
	var wg sync.WaitGroup
	for i := range logs {
		id := fmt.Sprintf("log-%02d", i)
		wg.Go(func() {
			createLog(t, s, id)
			next := int64(2)
			for range rounds {
				next = appendN(t, s, id, next, 2)
				s.releaseLog(id)
				_, err := s.Load(context.Background(), id)
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, len(counts.openNow()), slots)
	for i := range logs {
		requireStored(t, s, fmt.Sprintf("log-%02d", i), 2+2*rounds)
	}
}

// A Load reads the log from disk; the writer must then write the file it
// read, not the descriptor kept from before, which may name an unlinked
// inode by now (the path replaced by a copy, as a restore does):
// acknowledged appends were once lost that way.
func TestAppendAfterLoadWritesTheFileLoadRead(t *testing.T) {
	s, _ := keptStore(t)
	path := createLog(t, s, "k")
	appendN(t, s, "k", 2, 1)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, data, 0o600)) // same content, new inode

	log, err := s.Load(context.Background(), "k")
	require.NoError(t, err)
	require.Len(t, log.Events, 3)
	appendN(t, s, "k", 3, 2) // acknowledged as durable

	requireStored(t, s, "k", 5)
}

// A log that fails while its file is kept (here the repairing Load's fsync
// fails) gives up its slot and descriptor: it never writes again, and with
// a budget of one no other log could keep a file any more.
func TestAFailedLogGivesUpItsKeptFile(t *testing.T) {
	counts := newCountFS(nil)
	faults := faultfs.New(counts)
	s, err := OpenJSONL(t.TempDir(), WithFS(faults), withKeptFiles(1))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	a := createLog(t, s, "a")
	require.Equal(t, []string{a}, counts.openNow())

	f, err := os.OpenFile(a, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"torn`) // a torn tail for Load to repair
	require.NoError(t, err)
	require.NoError(t, f.Close())
	faults.FailSync(1, syscall.EIO)
	_, err = s.Load(context.Background(), "a")
	require.ErrorIs(t, err, ErrLogFailed)

	b := createLog(t, s, "b")
	require.Equal(t, []string{b}, counts.openNow(), "the failed log's slot goes to the next log")
}

// A released log that keeps appending is queued for eviction once, not
// once per writer round (the queue once grew by an entry per append).
func TestAppendsToAReleasedLogDoNotGrowTheEvictionQueue(t *testing.T) {
	s, _ := keptStore(t, withKeptFiles(2))
	createLog(t, s, "r")
	s.releaseLog("r")
	appendN(t, s, "r", 2, 500)

	s.kept.mu.Lock()
	n := len(s.kept.released)
	s.kept.mu.Unlock()
	require.LessOrEqual(t, n, 2*max(s.kept.max, 64)+1, "one released log, %d queue entries", n)
}

// Writers of logs that keep no file open each open it for their round;
// hundreds of them at once (every turn of a Close appending its end) wait
// for one of the store's open tickets instead of running the process out
// of descriptors, where each shortage cost a pass over every log.
func TestConcurrentWritersHoldNoMoreFilesThanTheirTickets(t *testing.T) {
	ctx := context.Background()
	cfs := newCountFS(nil)
	s := openStore(t, WithFS(cfs), withKeptFiles(0), withOpenFiles(3))
	const logs = 40
	for i := range logs {
		require.NoError(t, s.Create(ctx, header(fmt.Sprintf("w-%d", i)), nil))
	}
	cfs.mu.Lock()
	cfs.slow = 2 * time.Millisecond
	cfs.mu.Unlock()
	cfs.resetPeak()
	var wg sync.WaitGroup
	errs := make([]error, logs)
	for i := range logs {
		wg.Go(func() { errs[i] = s.Append(ctx, fmt.Sprintf("w-%d", i), []Event{ev(0, "feedback/record", "{}")}) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "log w-%d", i)
	}
	require.LessOrEqual(t, cfs.peakOpen(), 3, "files open at once")
	for i := range logs {
		require.Len(t, readLog(t, s, fmt.Sprintf("w-%d", i)), 1)
	}
}

// The process's bound on open files is shared by every store, whichever
// synctest bubble (or none) first used it: a store written inside a
// bubble, then one written outside, both take and give back its tickets.
func TestTheProcessOpenBoundServesStoresInAndOutOfABubble(t *testing.T) {
	openTickets = sync.OnceValue(func() *openBound { return newOpenBound(defaultOpenFiles()) })
	write := func(t *testing.T) {
		s := openStore(t, withKeptFiles(0))
		require.NoError(t, s.Create(context.Background(), header("b"), nil))
		require.NoError(t, s.Append(context.Background(), "b", []Event{ev(0, "feedback/record", "{}")}))
		require.NoError(t, s.Close())
	}
	synctest.Test(t, write)
	write(t)
}
