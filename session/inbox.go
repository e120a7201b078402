package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/durable"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// inboxFileName is the file beside a session's log that holds its
// durable inbox in the JSONL store's durable admission mode: one JSON
// line per admitted message ({"admit":…}) or discard ({"discard":[ids]}),
// each line preceded by a newline and fsynced before the admission is
// acknowledged. A message is claimed when the log holds its
// user/message event.
const inboxFileName = "session.inbox"

// WithDurableAdmission turns on the durable admission mode: the manager
// acknowledges a follow-up only once this store has fsynced it to the
// child's inbox file (inboxFileName), and a resumed child runs every
// admitted message its log does not hold yet, oldest first. Without it
// a follow-up is acknowledged when the in-memory inbox accepts it. The
// mode stays with the store: OpenJSONL records it in the root
// (admissionMarker), and every later open of that root is in it too,
// with or without this option, so that whatever resumes a child runs
// what was admitted first.
func WithDurableAdmission() Option { return func(s *JSONL) { s.inbox = &jsonlInbox{s: s} } }

// DurableInbox returns the store's durable inbox, or false when it was
// opened without WithDurableAdmission (and never in that mode before).
// It does not block.
func (s *JSONL) DurableInbox() (DurableInbox, bool) {
	if s.inbox == nil {
		return nil, false
	}
	return s.inbox, true
}

// admissionMarker is the file in a store root that records that the store
// admits durably.
const admissionMarker = ".durable-admission"

// settleAdmissionMode records the durable admission mode in the root when
// it is on (the root made if missing; the marker file and its folder
// entry fsynced), else turns it on when the root records it.
func (s *JSONL) settleAdmissionMode() error {
	marker := filepath.Join(s.root, admissionMarker)
	_, err := s.fs.Stat(marker)
	switch {
	case err == nil:
		if s.inbox == nil {
			s.inbox = &jsonlInbox{s: s}
		}
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	case s.inbox == nil:
		return nil
	}
	if err := s.mkdirDurably(s.root); err != nil {
		return err
	}
	f, err := s.fs.OpenFile(marker, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.fs.SyncDir(s.root)
	}
	return err
}

// jsonlInbox is the JSONL store's durable inbox for one machine. One lock
// serializes admissions, discards and cut-offs, so each check and its
// write are one step; the leases it checks are this store's.
type jsonlInbox struct {
	s *JSONL

	mu       sync.Mutex
	parentOf map[string]string          // id → its header's parent ("" for none)
	admitted map[string]map[string]bool // id → message ids in its inbox file
	drains   map[string]Epoch           // parent → the lease epoch its drain closed admission under
}

// inboxLine is one line of an inbox file.
type inboxLine struct {
	Admit   *inboxAdmit `json:"admit,omitempty"`
	Discard []string    `json:"discard,omitempty"`
}

type inboxAdmit struct {
	ID        string          `json:"id"`
	From      string          `json:"from"`
	FromEpoch Epoch           `json:"fromEpoch"`
	Body      json.RawMessage `json:"body"`
}

// Admit appends m to id's inbox file and fsyncs it, after checking, under
// the inbox lock and while holding From's lease state, that From is id's
// parent, FromEpoch is its current lease and no drain closed admission
// below it. From "" admits a user's message to a top-level session (one
// whose header names no parent): there is no sender's lease to check.
func (in *jsonlInbox) Admit(ctx context.Context, id string, m Admission) (bool, error) {
	if err := in.s.checkOpen(); err != nil {
		return false, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	ids, err := in.admittedIn(ctx, id)
	if err != nil {
		return false, err
	}
	if ids[m.MessageID] {
		return false, nil
	}
	if err := in.authorize(ctx, id, m); err != nil {
		return false, err
	}
	if m.From != "" {
		from, err := in.s.state(m.From)
		if err != nil {
			return false, err
		}
		from.op.Lock() // the parent's lease cannot end between the check and the write
		defer from.op.Unlock()
		if !from.leased || from.epoch != m.FromEpoch {
			return false, fault.New(fault.Unauthorized, fmt.Sprintf(`session: parent "%s" epoch %d is not the live lease`, m.From, m.FromEpoch),
				durable.Fenced(m.From, int64(m.FromEpoch)))
		}
	}
	line := inboxLine{Admit: &inboxAdmit{ID: m.MessageID, From: m.From, FromEpoch: m.FromEpoch, Body: m.Body}}
	if err := in.write(ctx, id, line); err != nil {
		return false, err
	}
	ids[m.MessageID] = true
	return true, nil
}

// authorize checks the parent in id's header and the drain cut-offs of
// From and its ancestors (in.mu held).
func (in *jsonlInbox) authorize(ctx context.Context, id string, m Admission) error {
	parent, err := in.parent(ctx, id)
	if err != nil {
		return err
	}
	if parent != m.From {
		return fault.New(fault.Unauthorized, fmt.Sprintf(`session: session "%s" is not a child of "%s"`, id, m.From), nil)
	}
	for at := m.From; at != ""; {
		if in.drained(at) {
			return fault.New(fault.Draining, fmt.Sprintf(`session: admission to session "%s" is closed by a drain below "%s"`, id, at), nil)
		}
		if at, err = in.parent(ctx, at); err != nil {
			return err
		}
	}
	return nil
}

// Drained reports whether a drain in force closed admission below id's
// parent or any of its ancestors (the header chain, read once each; it
// ends at an ancestor the store does not have).
func (in *jsonlInbox) Drained(ctx context.Context, id string) (bool, error) {
	if err := in.s.checkOpen(); err != nil {
		return false, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	at, err := in.parent(ctx, id)
	for ; err == nil && at != ""; at, err = in.parent(ctx, at) {
		if in.drained(at) {
			return true, nil
		}
	}
	if errors.Is(err, ErrNotFound) {
		return false, nil // an ancestor that was never stored holds no lease
	}
	return false, err
}

// drained reports whether a drain closed admission below id under the
// lease id holds now (in.mu held).
func (in *jsonlInbox) drained(id string) bool {
	epoch, ok := in.drains[id]
	if !ok {
		return false
	}
	st := in.s.existingState(id)
	if st == nil {
		return false
	}
	st.op.Lock()
	defer st.op.Unlock()
	return st.leased && st.epoch == epoch
}

// parent is the parent named in id's header, read once (in.mu held).
func (in *jsonlInbox) parent(ctx context.Context, id string) (string, error) {
	if p, ok := in.parentOf[id]; ok {
		return p, nil
	}
	log, err := in.s.Inspect(ctx, id)
	if err != nil {
		return "", err
	}
	if in.parentOf == nil {
		in.parentOf = map[string]string{}
	}
	in.parentOf[id] = log.Header.ParentSession
	return log.Header.ParentSession, nil
}

// admittedIn is the set of message ids in id's inbox file, read once
// (in.mu held).
func (in *jsonlInbox) admittedIn(ctx context.Context, id string) (map[string]bool, error) {
	if ids, ok := in.admitted[id]; ok {
		return ids, nil
	}
	lines, err := in.read(ctx, id)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, l := range lines {
		if l.Admit != nil {
			ids[l.Admit.ID] = true
		}
	}
	if in.admitted == nil {
		in.admitted = map[string]map[string]bool{}
	}
	in.admitted[id] = ids
	return ids, nil
}

// path is id's inbox file, beside its log.
func (in *jsonlInbox) path(ctx context.Context, id string) (string, error) {
	log, err := in.s.find(ctx, id)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(log), inboxFileName), nil
}

// read parses id's inbox file; a line that does not parse is one whose
// write was never acknowledged (torn by a crash) and is skipped.
func (in *jsonlInbox) read(ctx context.Context, id string) ([]inboxLine, error) {
	path, err := in.path(ctx, id)
	if err != nil {
		return nil, err
	}
	data, err := in.s.fs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf(`session: read inbox of "%s": %w`, id, err)
	}
	var out []inboxLine
	for _, raw := range bytes.Split(data, []byte("\n")) {
		var l inboxLine
		if len(raw) > 0 && json.Unmarshal(raw, &l) == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// write appends one line to id's inbox file and fsyncs it (and, when it
// creates the file, its folder). The leading newline ends a line a crash
// tore.
func (in *jsonlInbox) write(ctx context.Context, id string, line inboxLine) error {
	path, err := in.path(ctx, id)
	if err != nil {
		return err
	}
	data, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, statErr := in.s.fs.Stat(path)
	f, err := in.s.fs.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf(`session: write inbox of "%s": %w`, id, err)
	}
	_, err = f.Write(append([]byte("\n"), data...))
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil && errors.Is(statErr, fs.ErrNotExist) {
		err = in.s.fs.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf(`session: write inbox of "%s": %w`, id, err)
	}
	return nil
}

// Pending returns the admitted messages of id that were not discarded and
// whose user/message event is not in its log, oldest first.
func (in *jsonlInbox) Pending(ctx context.Context, id string) ([]Admission, error) {
	if err := in.s.checkOpen(); err != nil {
		return nil, err
	}
	in.mu.Lock()
	lines, err := in.read(ctx, id)
	in.mu.Unlock()
	if err != nil || len(lines) == 0 {
		return nil, err
	}
	log, err := in.s.Inspect(ctx, id)
	if err != nil {
		return nil, err
	}
	settled := map[string]bool{}
	for _, e := range log.Events {
		if e.Type == vocab.TypeUserMessage {
			settled[durable.MessageID(e.Data)] = true
		}
	}
	for _, l := range lines {
		for _, d := range l.Discard {
			settled[d] = true
		}
	}
	var out []Admission
	for _, l := range lines {
		if a := l.Admit; a != nil && !settled[a.ID] {
			settled[a.ID] = true
			out = append(out, Admission{MessageID: a.ID, From: a.From, FromEpoch: a.FromEpoch, Body: a.Body})
		}
	}
	return out, nil
}

// Discard records messageIDs of id as settled, while epoch is the latest
// lease this store gave out for id (held or just released).
func (in *jsonlInbox) Discard(ctx context.Context, id string, epoch Epoch, messageIDs []string) error {
	if len(messageIDs) == 0 {
		return nil
	}
	st, err := in.s.state(id)
	if err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	st.op.Lock()
	defer st.op.Unlock()
	if epoch == 0 {
		return fencedError(id, 0)
	}
	if st.epoch != epoch {
		return fencedError(id, epoch)
	}
	return in.write(ctx, id, inboxLine{Discard: messageIDs})
}

// CloseAdmission records a drain cut-off below parent at epoch (this
// process's memory: the JSONL store's leases are this process's too).
func (in *jsonlInbox) CloseAdmission(_ context.Context, parent string, epoch Epoch) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.drains == nil {
		in.drains = map[string]Epoch{}
	}
	in.drains[parent] = epoch
	return nil
}

var _ Admitting = (*JSONL)(nil)
