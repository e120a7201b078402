package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Search limits and the snippet bound, in code points.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	snippetRunes = 240
)

// The highlight markers FTS5 puts around matches (noncharacters, removed
// from indexed text by sanitize).
const (
	markOpen  = '\uFDD0'
	markClose = '\uFDD1'
)

// Hit is one matching event.
type Hit struct {
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
	Type      string `json:"type"`
	Snippet   string `json:"snippet"`
}

// Page is one page of hits; More is true when later pages exist.
type Page struct {
	Hits []Hit
	More bool
}

// SearchRequest asks for the events whose text holds Phrase as a literal
// phrase of unicode61 tokens (FTS syntax in it is text), Limit hits (1 to
// MaxLimit, 0 for DefaultLimit) after skipping Offset.
type SearchRequest struct {
	Phrase string
	Limit  int
	Offset int
}

// normalizePhrase trims the phrase and collapses its whitespace runs to
// single spaces. A phrase that is blank or holds NUL is
// SESSION_QUERY_INVALID_QUERY.
func normalizePhrase(phrase string) (string, error) {
	if strings.ContainsRune(phrase, 0) || !utf8.ValidString(phrase) {
		return "", invalidQuery()
	}
	normalized := strings.Join(strings.Fields(phrase), " ")
	if normalized == "" {
		return "", invalidQuery()
	}
	return normalized, nil
}

func invalidQuery() error {
	return &fault.Error{Code: fault.QueryInvalidQuery, Message: "search query must be non-blank text without NUL"}
}

// ftsPhrase quotes a normalized phrase as one FTS5 string: every `"`
// doubled, so that operators, column filters and wildcards are text.
func ftsPhrase(normalized string) string {
	return `"` + strings.ReplaceAll(sanitize(normalized), `"`, `""`) + `"`
}

func (r SearchRequest) limit() (int, error) {
	switch {
	case r.Offset < 0:
		return 0, &fault.Error{Code: fault.QueryInvalidLimit, Message: fmt.Sprintf("offset must be a non-negative integer, got %d", r.Offset)}
	case r.Limit == 0:
		return DefaultLimit, nil
	case r.Limit < 1 || r.Limit > MaxLimit:
		return 0, &fault.Error{Code: fault.QueryInvalidLimit, Message: "limit must be an integer between 1 and 100"}
	}
	return r.Limit, nil
}

// Search reconciles the index, brings the searchable text of every changed
// log up to date (one Store.Inspect each), and returns one page of the
// matching events of stored sessions: most matches first, then the
// shorter text, the later event, the session id, the later seq. A stored
// log that cannot be read (damaged before its last turn/end, or holding an
// event type this build refuses) fails the search, as the original's
// does (unreadableLog).
func (d *DB) Search(ctx context.Context, req SearchRequest) (Page, error) {
	phrase, err := normalizePhrase(req.Phrase)
	if err != nil {
		return Page{}, err
	}
	limit, err := req.limit()
	if err != nil {
		return Page{}, err
	}
	unreadable, err := d.refresh(ctx)
	if err != nil {
		return Page{}, err
	}
	if unreadable != nil {
		return Page{}, unreadableLog(unreadable)
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT session_id, seq, type, h FROM (
		SELECT session_id, seq, type, time, length, highlight(docs, 0, char(64976), char(64977)) AS h FROM docs WHERE docs MATCH ?)
		ORDER BY length(h) - length(replace(h, char(64976), '')) DESC, length ASC, time DESC, session_id ASC, seq DESC
		LIMIT ? OFFSET ?`, ftsPhrase(phrase), limit+1, req.Offset)
	if err != nil {
		return Page{}, d.searchFailure(ctx, err)
	}
	defer rows.Close()
	var page Page
	for rows.Next() {
		var hit Hit
		var highlighted string
		if err := rows.Scan(&hit.SessionID, &hit.Seq, &hit.Type, &highlighted); err != nil {
			return Page{}, d.searchFailure(ctx, err)
		}
		hit.Snippet = snippet(highlighted)
		page.Hits = append(page.Hits, hit)
	}
	if err := rows.Err(); err != nil {
		return Page{}, d.searchFailure(ctx, err)
	}
	if len(page.Hits) > limit {
		page.Hits, page.More = page.Hits[:limit], true
	}
	return page, nil
}

func (d *DB) searchFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &fault.Error{Code: fault.QueryAborted, Message: "session search was aborted", Cause: context.Cause(ctx)}
	}
	return &fault.Error{Code: fault.QueryIndexFailed, Message: "session search failed: " + err.Error(), Cause: err}
}

// unreadableLog is a search's failure on a stored log it could not read
// (the store's error), in the original's words.
func unreadableLog(err error) error {
	return &fault.Error{Code: fault.QueryPersistenceFailed, Message: "session-search persistence observation failed: " + err.Error(), Cause: err}
}

// refresh reconciles and re-derives the title and documents of every
// session whose log changed since they were derived. unreadable is the
// error reading the first log (in id order) that could not be read; such
// a log gets no facts and is read again on the next refresh.
func (d *DB) refresh(ctx context.Context) (unreadable, err error) {
	err = d.reconcile(ctx)
	if errors.Is(err, errListing) {
		_, listErr := d.sessions.Store().List(ctx)
		if listErr == nil {
			listErr = err
		}
		return nil, &fault.Error{Code: fault.QueryPersistenceFailed, Message: "session persistence listing failed: " + listErr.Error(), Cause: listErr}
	}
	if err != nil {
		return nil, d.searchFailure(ctx, err)
	}
	stale, err := d.staleFacts(ctx)
	if err != nil {
		return nil, d.searchFailure(ctx, err)
	}
	unreadable, err = d.deriveFacts(ctx, stale)
	if err != nil {
		return nil, d.searchFailure(ctx, err)
	}
	return unreadable, nil
}

type staleSession struct{ id, revision string }

func (d *DB) staleFacts(ctx context.Context) ([]staleSession, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT s.id, coalesce(l.revision, '') FROM sessions s LEFT JOIN logs l ON l.dir = s.dir
		WHERE s.facts_revision IS NOT l.revision OR l.revision = 'racy' ORDER BY s.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []staleSession
	for rows.Next() {
		var s staleSession
		if err := rows.Scan(&s.id, &s.revision); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// afterInspect, when set, is called by deriveFacts between its reads of
// the logs and its write transaction (a test interleaves another handle
// there).
var afterInspect func(*DB)

// deriveBatch is how many logs deriveFacts reads before it writes what
// they give in one transaction.
const deriveBatch = 256

// derived is one stale session with what a read of its log gave.
type derived struct {
	staleSession
	log *session.Log
	err error
}

// deriveFacts reads each stale session's log once (Inspect: its valid
// prefix, never a repair) and replaces its title, last seq and documents,
// writing a batch of sessions per transaction. An unreadable log gets
// none, and is read again on the next use; unreadable is the first such
// read's error (a log removed since the listing is none).
func (d *DB) deriveFacts(ctx context.Context, stale []staleSession) (unreadable, err error) {
	for len(stale) > 0 {
		batch := make([]derived, min(len(stale), deriveBatch))
		for i := range batch {
			batch[i].staleSession = stale[i]
			batch[i].log, batch[i].err = d.sessions.Store().Inspect(ctx, stale[i].id)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if unreadable == nil && batch[i].err != nil && !errors.Is(batch[i].err, session.ErrNotFound) {
				unreadable = batch[i].err
			}
		}
		stale = stale[len(batch):]
		if afterInspect != nil {
			afterInspect(d)
		}
		if err := d.writeFacts(ctx, batch); err != nil {
			return nil, err
		}
	}
	return unreadable, nil
}

// writeFacts writes, in one transaction, the facts of each read session
// that is still stale.
func (d *DB) writeFacts(ctx context.Context, batch []derived) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	insert, err := tx.PrepareContext(ctx, insertDoc)
	if err != nil {
		return err
	}
	defer insert.Close()
	for _, s := range batch {
		if err := writeFactsOf(ctx, tx, insert, s); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// writeFactsOf replaces s's title, last seq and documents when s is still
// stale.
func writeFactsOf(ctx context.Context, tx *sql.Tx, insert *sql.Stmt, s derived) error {
	current, firstDoc, hasDocs, err := stillStale(ctx, tx, s.staleSession)
	if err != nil || !current {
		return err
	}
	if hasDocs {
		if _, err := tx.ExecContext(ctx, `DELETE FROM docs WHERE rowid BETWEEN ? AND ?`, firstDoc, firstDoc|(1<<docRowBits-1)); err != nil {
			return err
		}
	}
	return writeLogFacts(ctx, tx, insert, factsOf{id: s.id, revision: s.revision, firstDoc: firstDoc, log: s.log, err: s.err})
}

// insertDoc inserts one search document.
const insertDoc = `INSERT INTO docs(rowid, text, session_id, seq, type, time, length) VALUES (?, ?, ?, ?, ?, ?, ?)`

// factsOf is one read of a session's log: the session, the revision the
// read is recorded under, the first rowid of its documents (docRows) and
// the log read, or the error reading it.
type factsOf struct {
	id, revision string
	firstDoc     int64
	log          *session.Log
	err          error
}

// logFacts are the per-session columns derived from one read of its log.
type logFacts struct {
	recorded sql.NullString // the revision they were derived at; NULL: derive again
	title    sql.NullString
	lastSeq  sql.NullInt64
	turnEnd  sql.NullString
}

// insertDocs inserts f's documents (with insert, the prepared insertDoc)
// and returns its title, last seq, last turn end and the revision to
// record: an unreadable log gets no documents and no revision, so that the
// next use reads it again.
func insertDocs(ctx context.Context, insert *sql.Stmt, f factsOf) (logFacts, error) {
	out := logFacts{recorded: sql.NullString{String: f.revision, Valid: f.err == nil && f.revision != racy},
		title: sql.NullString{Valid: true}, lastSeq: sql.NullInt64{Int64: -1, Valid: f.err == nil}}
	if f.err != nil {
		return out, nil
	}
	out.turnEnd = nullString(LastTurnEnd(f.log.Events))
	for _, e := range f.log.Events {
		out.lastSeq.Int64 = e.Seq
		text, title, titled := eventFacts(e)
		if titled && out.title.String == "" {
			out.title.String = title
		}
		if text == "" || e.Seq >= 1<<docRowBits { // beyond the documents a session's rowid range holds
			continue
		}
		if _, err := insert.ExecContext(ctx, f.firstDoc|e.Seq, text, f.id, e.Seq, e.Type, e.Time, utf8.RuneCountInString(text)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// writeLogFacts writes f's facts (insertDocs) into a session row that
// holds no documents.
func writeLogFacts(ctx context.Context, tx *sql.Tx, insert *sql.Stmt, f factsOf) error {
	facts, err := insertDocs(ctx, insert, f)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET facts_revision = ?, title = ?, last_seq = ?, last_turn_end = ?
		WHERE rowid = ?`, facts.recorded, facts.title, facts.lastSeq, facts.turnEnd, f.firstDoc>>docRowBits)
	return err
}

// stillStale reports, inside deriveFacts's write transaction, whether the
// session is still indexed with the log revision staleFacts read (outside
// it), with the first rowid of its documents (docRows) and whether it may
// have any (only a session with a last seq has). When another process has
// since removed the session or recorded another revision, what was read is
// not written: documents of a session no longer listed would never be
// dropped, and the next use derives again.
func stillStale(ctx context.Context, tx *sql.Tx, s staleSession) (current bool, firstDoc int64, hasDocs bool, err error) {
	var revision string
	var row int64
	err = tx.QueryRowContext(ctx, `SELECT coalesce(l.revision, ''), s.rowid, s.last_seq IS NOT NULL FROM sessions s
		LEFT JOIN logs l ON l.dir = s.dir WHERE s.id = ?`, s.id).Scan(&revision, &row, &hasDocs)
	if errors.Is(err, sql.ErrNoRows) {
		return false, 0, false, nil
	}
	return err == nil && revision == s.revision, row << docRowBits, hasDocs, err
}

// Title is a stored session's title (the first line of its first user
// message, "" when it has none) as of the seq of its log's last event
// (-1 for a log without events), with how its last turn ended
// (LastTurnEnd).
type Title struct {
	Text    string
	AsOfSeq int64
	// LastTurnEnd is the data of the turn/end event that closed the log's
	// last turn; nil when no turn ended or one opened after it.
	LastTurnEnd json.RawMessage
}

// LastTurnEnd is the data of the turn/end event that closed the last turn
// in events; nil when none ended or a turn/start follows the last end.
func LastTurnEnd(events []session.Event) json.RawMessage {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case vocab.TypeTurnStart:
			return nil
		case vocab.TypeTurnEnd:
			return events[i].Data
		}
	}
	return nil
}

func nullString(data []byte) sql.NullString {
	return sql.NullString{String: string(data), Valid: data != nil}
}

// Titles brings the index up to date and returns the title of every
// stored session whose log it could read; an unreadable log has none.
func (d *DB) Titles(ctx context.Context) (map[string]Title, error) {
	if _, err := d.refresh(ctx); err != nil {
		return nil, err
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT id, title, last_seq, last_turn_end FROM sessions WHERE last_seq IS NOT NULL`)
	if err != nil {
		return nil, d.searchFailure(ctx, err)
	}
	defer rows.Close()
	out := map[string]Title{}
	for rows.Next() {
		var id string
		var title Title
		var end sql.NullString
		if err := rows.Scan(&id, &title.Text, &title.AsOfSeq, &end); err != nil {
			return nil, d.searchFailure(ctx, err)
		}
		if end.Valid {
			title.LastTurnEnd = json.RawMessage(end.String)
		}
		out[id] = title
	}
	if err := rows.Err(); err != nil {
		return nil, d.searchFailure(ctx, err)
	}
	return out, nil
}

// snippet is the original's excerpt of highlighted text: markers removed,
// white space runs made single spaces (plainText); a text of at most
// snippetRunes code points is whole; a longer one is a window of
// snippetRunes code points that opens snippetRunes/3 before the first match
// ("…" where text was cut, counted in the window) and, when it reaches the
// end, widens backwards instead of closing with "…". The cut keeps the
// characters at its edges, spaces too.
func snippet(highlighted string) string {
	text, match := plainText(highlighted)
	if len(text) <= snippetRunes {
		return string(text)
	}
	start := max(0, min(match, len(text)-1)-snippetRunes/3)
	prefix := ""
	if start > 0 {
		prefix = "…"
	}
	width := snippetRunes - utf8.RuneCountInString(prefix)
	if start+width-1 >= len(text) { // no room for a closing "…": end at the end
		return prefix + string(text[len(text)-width:])
	}
	return prefix + string(text[start:start+width-1]) + "…"
}

// plainText is highlighted text without its markers, with each run of
// white space (as JavaScript's \s has it) made one space and none at
// either end, and the code-point offset of its first match (0 if none).
func plainText(highlighted string) (text []rune, match int) {
	match = -1
	for _, r := range highlighted {
		switch {
		case r == markOpen:
			if match < 0 {
				match = len(text)
			}
		case r == markClose:
		case jsSpace(r):
			if len(text) > 0 && text[len(text)-1] != ' ' {
				text = append(text, ' ')
			}
		default:
			text = append(text, r)
		}
	}
	if n := len(text); n > 0 && text[n-1] == ' ' {
		text = text[:n-1]
	}
	return text, max(match, 0)
}

// jsSpace reports whether JavaScript's \s matches r: Unicode's white space
// and U+FEFF, but not U+0085.
func jsSpace(r rune) bool {
	return r == '\uFEFF' || (unicode.IsSpace(r) && r != '\u0085')
}
