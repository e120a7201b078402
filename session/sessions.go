package session

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"
	"weak"

	"github.com/dsh-actors/dsh-actors/internal/listeners"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// ChangeKind says what a Change reports.
type ChangeKind int

const (
	// Added: a session became live (Create or Resume).
	Added ChangeKind = iota + 1
	// Removed: a live session was released.
	Removed
	// Appended: an event was appended to a live session (in memory).
	Appended
)

// Change is one notification delivered to Subscribe listeners. Event is
// set only for Appended.
type Change struct {
	Kind   ChangeKind
	Header Header
	Event  Event
}

// Sessions is the live session registry (the original's ctx.sessions):
// the sessions this process is running, with their in-memory events,
// written behind to an optional Store.
type Sessions struct {
	store Store

	mu       sync.Mutex
	live     map[string]*Live
	reserved map[string]bool // ids being created or resumed
	created  uint64          // creation counter; Live.created orders List

	listeners listeners.List[Change]
}

// NewSessions returns an empty registry over store. A nil store keeps
// sessions in memory only; Flush then reports false. When store's leases
// can be lost while held (Postgres: a renewal finds one taken over), the
// live session of a lost lease is failed at once as if its next write
// had been refused with fault.Fenced (see Live.OnWriteFailure). That
// watch holds the registry weakly: it ends when the registry becomes
// unreachable (a cleanup removes it from the store) or the store closes.
func NewSessions(store Store) *Sessions {
	s := &Sessions{store: store, live: map[string]*Live{}, reserved: map[string]bool{}}
	if store != nil {
		registry := weak.Make(s)
		if w, ok := store.(LeaseWatcher); ok {
			stop := w.WatchLeases(func(id string, epoch Epoch) {
				if s := registry.Value(); s != nil {
					s.leaseLost(id, epoch)
				}
			})
			runtime.AddCleanup(s, func(stop func()) { stop() }, stop)
		}
	}
	return s
}

// leaseLost fences the live session that writes under the lost lease
// (id, epoch), if any. It runs on the store's renewing goroutine.
func (s *Sessions) leaseLost(id string, epoch Epoch) {
	if l := s.Get(id); l != nil {
		l.fence(epoch)
	}
}

// Store returns the persistence store, or nil.
func (s *Sessions) Store() Store { return s.store }

// Create makes a new live session. A nil seed creates an empty log; a
// non-nil seed (even empty) holds inherited events (Seq == index) and is
// followed by a session/end-seed marker unless it already ends with one,
// as the original's Session constructor does. With a store, the header and
// seed are durably created first (Store.Create), and with a Fenced store
// the session's lease is acquired; then the session is published and
// listeners get Added. A zero CreatedAt becomes now. An id that is live or
// stored is ErrExists.
func (s *Sessions) Create(ctx context.Context, h Header, seed []Event) (*Live, error) {
	if h.CreatedAt == 0 {
		h.CreatedAt = time.Now().UnixMilli()
	}
	if err := validateNewHeader(h); err != nil {
		return nil, err
	}
	events, err := seedEvents(h.ID, seed)
	if err != nil {
		return nil, err
	}
	if err := s.reserve(h.ID); err != nil {
		return nil, err
	}
	defer s.unreserve(h.ID)
	var epoch Epoch
	if s.store != nil {
		if err := s.store.Create(ctx, h, events); err != nil {
			return nil, err
		}
		if epoch, err = s.acquire(ctx, h.ID); err != nil {
			return nil, err
		}
	}
	l := newLive(s, h, events, len(events), epoch)
	s.publish(l)
	return l, nil
}

// acquire takes id's lease when the store is Fenced (epoch 0 otherwise).
func (s *Sessions) acquire(ctx context.Context, id string) (Epoch, error) {
	if f, ok := s.store.(Fenced); ok {
		return f.Acquire(ctx, id)
	}
	return 0, nil
}

// releaseLease gives id's lease up when the store is Fenced.
func (s *Sessions) releaseLease(ctx context.Context, id string, epoch Epoch) error {
	if f, ok := s.store.(Fenced); ok && epoch != 0 {
		return f.Release(ctx, id, epoch)
	}
	return nil
}

// seedEvents copies a seed, checks its seqs and adds the end-seed marker.
func seedEvents(id string, seed []Event) ([]Event, error) {
	if seed == nil {
		return nil, nil
	}
	if _, err := encodeBatch(id, 0, seed, nil); err != nil {
		return nil, err
	}
	events := slices.Clone(seed)
	return withEndSeed(events), nil
}

// withEndSeed appends session/end-seed unless events already end with it.
func withEndSeed(events []Event) []Event {
	if n := len(events); n > 0 && events[n-1].Type == vocab.TypeSessionEndSeed {
		return events
	}
	return append(events, Event{
		Type: vocab.TypeSessionEndSeed, Seq: int64(len(events)), Time: time.Now().UnixMilli(), Data: json.RawMessage("{}"),
	})
}

// Resume makes a stored session live again: with a Fenced store its lease
// is acquired first (fault.LeaseHeld while another holder has it), then a
// repairing Store.Load (torn tail truncated, an interrupted turn closed),
// then a session/end-seed
// marker unless the log already ends with one (written behind), then
// publication and Added. Without a store it is ErrNotFound; a live id is
// ErrExists.
func (s *Sessions) Resume(ctx context.Context, id string) (*Live, error) {
	if s.store == nil {
		return nil, notFound(id)
	}
	if err := s.reserve(id); err != nil {
		return nil, err
	}
	defer s.unreserve(id)
	epoch, err := s.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	log, err := s.store.Load(ctx, id)
	if err != nil {
		return nil, errors.Join(err, s.releaseLease(context.Background(), id, epoch))
	}
	return s.publishLoaded(log, epoch), nil
}

// ResumeLoaded is Resume over a log the caller has just read with this
// registry's Store().Load, so that a caller which had to read the log
// first (to check it) reads it only once: the log is not read again and
// not modified. With a Fenced store the session's lease is acquired
// (fault.LeaseHeld while another holder has it); otherwise it blocks only
// for the registry's lock. A live id is ErrExists.
func (s *Sessions) ResumeLoaded(log *Log) (*Live, error) {
	if err := s.reserve(log.Header.ID); err != nil {
		return nil, err
	}
	defer s.unreserve(log.Header.ID)
	epoch, err := s.acquire(context.Background(), log.Header.ID)
	if err != nil {
		return nil, err
	}
	return s.publishLoaded(log, epoch), nil
}

// publishLoaded publishes the live session of a repaired, stored log,
// marking its end of seed behind.
func (s *Sessions) publishLoaded(log *Log, epoch Epoch) *Live {
	stored := len(log.Events)
	l := newLive(s, log.Header, withEndSeed(slices.Clone(log.Events)), stored, epoch)
	s.publish(l)
	return l
}

func (s *Sessions) reserve(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[id] != nil || s.reserved[id] {
		return existsf(`session "%s" already exists`, id)
	}
	s.reserved[id] = true
	return nil
}

func (s *Sessions) unreserve(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.reserved, id)
}

// publish enters l into the registry and announces it before any append
// to it can be announced.
func (s *Sessions) publish(l *Live) {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	s.mu.Lock()
	s.created++
	l.created = s.created
	s.live[l.header.ID] = l
	s.mu.Unlock()
	l.startFlusher()
	s.notify(Added, l, Event{})
}

// Get returns the live session id, or nil.
func (s *Sessions) Get(id string) *Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// List returns the live sessions in creation order (a fresh slice).
func (s *Sessions) List() []*Live {
	s.mu.Lock()
	list := make([]*Live, 0, len(s.live))
	for _, l := range s.live {
		list = append(list, l)
	}
	s.mu.Unlock()
	slices.SortFunc(list, func(a, b *Live) int { return cmp.Compare(a.created, b.created) })
	return list
}

// Flush blocks until every event appended to l so far is durable and
// reports true; it reports (false, nil) when there is no store, and an
// error wrapping ErrLogFailed when a write-behind failed. A released or
// foreign session is errNotLive. ctx bounds the wait only.
func (s *Sessions) Flush(ctx context.Context, l *Live) (bool, error) {
	if !s.owns(l) {
		return false, notLive(l)
	}
	if s.store == nil {
		return false, nil
	}
	return l.flush(ctx, false)
}

// owns reports whether l is live in s: a Live is published before anyone
// can hold it and leaves the registry only once released, so the check
// takes l's own lock rather than the registry's.
func (s *Sessions) owns(l *Live) bool {
	return l != nil && l.s == s && !l.isReleased()
}

func notLive(l *Live) error {
	id := "<nil>"
	if l != nil {
		id = l.header.ID
	}
	return &kindError{kind: errNotLive, msg: `session "` + id + `" is not live in this store`}
}

// Release refuses further appends to l, waits for its pending writes
// (Flush), gives its lease up (a Fenced store), lets the store free what
// it holds for the log (JSONL closes a kept file), then drops it from the
// registry and announces Removed. The session is dropped even when the
// flush fails or ctx ends; that error is returned. Releasing a session
// that is not live is a no-op.
func (s *Sessions) Release(ctx context.Context, l *Live) error {
	if l == nil || l.s != s || !l.markReleased() {
		return nil
	}
	var err error
	if s.store != nil {
		_, err = l.flush(ctx, true)
		s.releaseLeaseAfterWrites(ctx, l, err)
		if l.log != nil {
			l.log.release()
		} else if r, ok := s.store.(logReleaser); ok {
			r.releaseLog(l.header.ID)
		}
	}
	s.mu.Lock()
	delete(s.live, l.header.ID)
	s.mu.Unlock()
	s.notify(Removed, l, Event{})
	return err
}

// releaseLeaseAfterWrites gives l's lease up once its write-behind is
// over: at once unless ctx ended the flush first, else behind, when the
// pending writes are done (they are made under the lease).
func (s *Sessions) releaseLeaseAfterWrites(ctx context.Context, l *Live, flushErr error) {
	if l.epoch == 0 {
		return
	}
	if flushErr == nil || ctx.Err() == nil {
		_ = s.releaseLeaseOf(l)
		return
	}
	go func() {
		_, _ = l.flush(context.Background(), true)
		_ = s.releaseLeaseOf(l)
	}()
}

// releaseLeaseOf gives l's lease up: through its bound log when it has
// one (no lookup by id), else through the store.
func (s *Sessions) releaseLeaseOf(l *Live) error {
	if l.log != nil {
		return l.log.releaseLease(l.epoch)
	}
	return s.releaseLease(context.Background(), l.header.ID, l.epoch)
}

// logReleaser is a Store that holds per-log resources (JSONL's kept
// files) until told a log's live session ended.
type logReleaser interface{ releaseLog(id string) }

// Subscribe registers fn for every later Change and returns a function
// that unregisters it. fn runs synchronously on the goroutine that made
// the change (Appended: inside Live.Append, in seq order per session); it
// must not block and must not append to the session it is told about. A
// panic in fn is recovered and does not reach the other listeners or the
// caller.
func (s *Sessions) Subscribe(fn func(Change)) (cancel func()) { return s.listeners.Add(fn) }

// notify tells every listener of a change to l (e is set for Appended);
// the Change, with its header copy, is built only when someone listens.
func (s *Sessions) notify(kind ChangeKind, l *Live, e Event) {
	fns := s.listeners.Funcs()
	if len(fns) == 0 {
		return
	}
	c := Change{Kind: kind, Header: l.Header(), Event: e}
	for _, fn := range fns {
		callIsolated(fn, c)
	}
}

func callIsolated(fn func(Change), c Change) {
	defer func() { _ = recover() }() // a listener's panic must not break the append or other listeners
	fn(c)
}
