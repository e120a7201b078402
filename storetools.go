package dsh

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/pgstore"
	"github.com/dsh-actors/dsh-actors/session"
)

// Damage is one problem Check found in a store or, of Kind "pending", the
// messages a session's durable inbox admitted that no turn ran yet (no
// damage: the session runs them first, in this order, when it resumes).
// The other kinds are "damaged-log" (a log a read refuses, one a resume
// refuses, or one a resume would cut), "unreadable-header", "temp-file",
// "empty-folder" and "bad-layout".
type Damage struct {
	Kind string
	// Path is the file or folder; on a Postgres store, the session's id.
	Path string
	// Line is the line of the log file the damage starts at (from 1, the
	// header's), 0 when no line is involved.
	Line int
	// FrameAt is the byte offset of the damaged Zstandard frame, -1 when
	// none is involved.
	FrameAt int64
	// Message says what is wrong, naming Path.
	Message string
}

// pendingKind is the Kind of the report of a durable inbox's unrun
// messages.
const pendingKind = "pending"

// Check reads the store dir names (a JSONL store folder, or a Postgres
// store's postgres:// URL) without writing to its sessions and returns every
// problem it finds, then each session whose durable inbox holds messages
// no turn ran yet. A JSONL folder is walked file by file, in folder order
// (a folder that does not exist has no problems); a Postgres store is read
// session by session, in listing order. It fails only when the store
// cannot be opened or listed or ctx ends. It blocks while it reads.
func Check(ctx context.Context, dir string) ([]Damage, error) {
	if isPostgresURL(dir) {
		return checkPostgres(ctx, dir)
	}
	found, err := session.Check(ctx, dir)
	if err != nil {
		return nil, err
	}
	store, err := session.OpenJSONL(dir, session.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	pending, err := pendingMessages(ctx, store, func(h session.Header) (string, error) {
		log, err := logpath.Path(dir, h.Cwd, h.ID)
		return filepath.Join(filepath.Dir(log), "session.inbox"), err
	})
	return append(damageOf(found), pending...), err
}

// checkPostgres is Check of the Postgres store at url.
func checkPostgres(ctx context.Context, url string) ([]Damage, error) {
	store, err := pgstore.Open(ctx, url, pgstore.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, openFailed(err)
	}
	defer store.Close()
	found, err := session.CheckStore(ctx, store)
	if err != nil {
		return nil, err
	}
	pending, err := pendingMessages(ctx, store, func(h session.Header) (string, error) { return h.ID, nil })
	return append(damageOf(found), pending...), err
}

// damageOf converts the store's reports.
func damageOf(found []session.Damage) []Damage {
	out := make([]Damage, len(found))
	for i, d := range found {
		out[i] = Damage{Kind: d.Kind, Path: d.Path, Line: d.Line, FrameAt: d.FrameAt, Message: d.Msg}
	}
	return out
}

// pendingMessages reports, in listing order, each session of store whose
// durable inbox holds admitted messages no turn ran yet, naming them
// oldest first, at the path inboxPath gives; nothing when the store keeps
// no durable inbox. It only reads.
func pendingMessages(ctx context.Context, store session.Store, inboxPath func(session.Header) (string, error)) ([]Damage, error) {
	in, ok := session.InboxOf(store)
	if !ok {
		return nil, nil
	}
	headers, err := store.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Damage
	for _, h := range headers {
		pending, err := in.Pending(ctx, h.ID)
		if err != nil || len(pending) == 0 {
			continue // a log that cannot be read is reported as damage already
		}
		ids := make([]string, len(pending))
		for i, p := range pending {
			ids[i] = p.MessageID
		}
		path, err := inboxPath(h)
		if err != nil {
			return nil, err
		}
		out = append(out, Damage{Kind: pendingKind, Path: path, FrameAt: -1,
			Message: fmt.Sprintf("%d admitted messages not run yet (%s); they run first, in this order, when the session resumes",
				len(ids), strings.Join(ids, ", "))})
	}
	return out, nil
}

// ImportReport is what Import did: the logs it copied, the sessions
// stored in the Postgres store already (left as they are), the logs it
// skipped because they could not be read, and the logs it copied without
// the torn tail a read leaves out (a crash's unfinished write), each in
// listing order.
type ImportReport struct {
	Imported int
	Present  int
	Skipped  []SkippedLog
	Cut      []SkippedLog
}

// SkippedLog is a log Import could not read, or copied without its torn
// tail: its session's id and what was wrong, naming the file (for a torn
// tail, its bytes, in check's words).
type SkippedLog struct {
	ID  string
	Err error
}

// Import copies every log of the JSONL store folder from into the Postgres
// store at the postgres:// URL to, each with its header and event lines
// as the file holds them, so that Export gives the same bytes back. A log
// that cannot be read is skipped and reported; a session stored there
// already is left as it is and counted, so running Import again copies
// what is missing. On a failure the report says what was done before it.
// It blocks until every log is copied.
func Import(ctx context.Context, from, to string) (ImportReport, error) {
	if !isPostgresURL(to) {
		return ImportReport{}, fault.New(fault.InvalidRequest, "dsh: Import copies into a Postgres store: "+to+" is no postgres:// URL", nil)
	}
	src, err := session.OpenJSONL(from)
	if err != nil {
		return ImportReport{}, err
	}
	defer src.Close()
	dst, err := pgstore.Open(ctx, to)
	if err != nil {
		return ImportReport{}, openFailed(err)
	}
	defer dst.Close()
	r, err := dst.Import(ctx, src)
	report := ImportReport{Imported: r.Imported, Present: r.Present}
	for _, d := range r.Damaged {
		report.Skipped = append(report.Skipped, SkippedLog{ID: d.ID, Err: d.Err})
	}
	for _, d := range r.Cut {
		report.Cut = append(report.Cut, SkippedLog{ID: d.ID, Err: d.Err})
	}
	return report, err
}

// Export writes every session of the Postgres store at the postgres://
// URL from into the JSONL store layout under the folder to (made when
// missing), with its header and event lines as stored, and returns how
// many it wrote; a log that exists under to already is refused. It blocks
// until every log is written.
func Export(ctx context.Context, from, to string) (int, error) {
	if !isPostgresURL(from) {
		return 0, fault.New(fault.InvalidRequest, "dsh: Export copies from a Postgres store: "+from+" is no postgres:// URL", nil)
	}
	src, err := pgstore.Open(ctx, from)
	if err != nil {
		return 0, openFailed(err)
	}
	defer src.Close()
	return src.Export(ctx, to)
}

// openFailed is a Postgres store that could not be opened, as Open reports
// it: fault.PersistenceUnavailable wrapping the cause.
func openFailed(err error) error {
	return fault.New(fault.PersistenceUnavailable, "dsh: open the Postgres store: "+err.Error(), err)
}
