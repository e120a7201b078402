package dsh

import (
	"context"

	"github.com/dsh-actors/dsh-actors/internal/index"
)

// The bounds of SearchRequest.Limit (the derived index's).
const (
	SearchDefaultLimit = 20
	SearchMaxLimit     = 100
)

// SearchRequest asks for the events whose text holds Phrase as a literal
// phrase of words (compared case- and accent-folded; search syntax in it
// is text): Limit hits (1 to SearchMaxLimit; 0 means SearchDefaultLimit)
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
// fault.QueryAborted (or fault.Cancelled). It blocks on the reads (on a
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
	var page index.Page
	if db != nil {
		page, err = db.Search(ctx, ireq)
	} else {
		page, err = index.ScanSearch(ctx, r.actors.Sessions().Store(), ireq)
	}
	if err != nil {
		return SearchPage{}, err
	}
	out := SearchPage{More: page.More, Hits: make([]SearchHit, len(page.Hits))}
	for i, h := range page.Hits {
		out.Hits[i] = SearchHit(h)
	}
	return out, nil
}
