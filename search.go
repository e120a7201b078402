package dsh

import (
	"context"
	"errors"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
)

// SearchMaxLimit is the largest SearchRequest.Limit (the derived index's).
const SearchMaxLimit = 100

// SearchRequest asks for the events whose text holds Phrase as a literal
// phrase of words (compared case- and accent-folded; search syntax in it
// is text): Limit hits (1 to SearchMaxLimit; 0 means 20)
// after skipping Offset (0 or more).
type SearchRequest struct {
	Phrase string
	Limit  int
	Offset int
}

// SearchHit is one matching event: its session, seq and type, and a
// snippet of its text around the match.
type SearchHit struct {
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
	Type      string `json:"type"`
	Snippet   string `json:"snippet"`
}

// SearchPage is one page of hits, best first; More is true when later
// pages exist.
type SearchPage struct {
	Hits []SearchHit
	More bool
}

// Search returns one page of the events of stored sessions whose text
// holds req.Phrase, most matches first, then the shorter text, the later
// event, the session id, the later seq. On a JSONL store folder the
// derived index answers (unless Options.NoIndex), otherwise every stored
// log is read; a memory-only runtime finds nothing. A blank phrase or
// one holding a NUL is fault.QueryInvalidQuery, a Limit or Offset out of
// range fault.QueryInvalidLimit, a ctx that ends during the search
// fault.QueryAborted (or fault.Cancelled), a store that cannot be listed
// or a stored log that cannot be read (damaged before its last turn/end,
// or holding an event type this build refuses; a torn last line is no
// failure) fault.QueryPersistenceFailed. An index that fails a search
// (a full disk, a damaged file) never fails it: the failure is logged at
// Warn (Options.Logger) naming its cause, and the logs answer. It blocks on the reads (on a
// JSONL folder, one read of each log changed since the last use).
func (r *Runtime) Search(ctx context.Context, req SearchRequest) (SearchPage, error) {
	if err := r.actors.Err(); err != nil {
		return SearchPage{}, err
	}
	ireq := index.SearchRequest{Phrase: req.Phrase, Limit: req.Limit, Offset: req.Offset}
	db, err := r.index.open(ctx)
	if err != nil {
		return SearchPage{}, err
	}
	var indexed phraseIndex
	if db != nil {
		indexed = db
	}
	page, err := r.searchIndexOrLogs(ctx, indexed, ireq)
	if err != nil {
		return SearchPage{}, err
	}
	out := SearchPage{More: page.More, Hits: make([]SearchHit, len(page.Hits))}
	for i, h := range page.Hits {
		out.Hits[i] = SearchHit(h)
	}
	return out, nil
}

// phraseIndex is what answers a search before the logs: the derived index.
type phraseIndex interface {
	Search(ctx context.Context, req index.SearchRequest) (index.Page, error)
}

// searchIndexOrLogs answers req from indexed when there is one, else by
// reading every stored log; an index that fails for any reason but the
// request's own refusals or a cancellation is logged at Warn and the logs
// answer instead.
func (r *Runtime) searchIndexOrLogs(ctx context.Context, indexed phraseIndex, req index.SearchRequest) (index.Page, error) {
	if indexed != nil {
		page, err := indexed.Search(ctx, req)
		if err == nil || ctx.Err() != nil || errors.Is(err, fault.QueryInvalidQuery) || errors.Is(err, fault.QueryInvalidLimit) ||
			errors.Is(err, fault.QueryPersistenceFailed) { // the logs would fail alike
			return page, err
		}
		r.actors.Logger().Warn("dsh: the derived index failed a search; the logs answer it", "err", err)
	}
	return index.ScanSearch(ctx, r.actors.Sessions().Store(), req)
}
