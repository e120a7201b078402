package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
)

// sessionSearch answers session.search {query, limit?, offset?} with
// {hits, hasMore}: the events of stored sessions whose text holds query as
// a literal phrase (operators, quotes and wildcards in it are text), most
// matches first, each {sessionId, seq, type, snippet}. query must hold
// something besides whitespace and no NUL; limit is 1 to 100 (default 20),
// offset at least 0 (default 0).
func (h *Handler) sessionSearch(ctx context.Context, c call) (any, *rpcError) {
	p := readPayload(c.payload)
	if p.fields == nil {
		return nil, invalidPayload(c, p)
	}
	phrase := p.searchQuery("query")
	limit := p.optionalInt("limit", true)
	if limit != nil && *limit > index.MaxLimit {
		p.add(issueTooBig, []any{"limit"}, fmt.Sprintf("must be at most %d", index.MaxLimit))
	}
	offset := p.optionalInt("offset", false)
	if bad := invalidPayload(c, p); bad != nil {
		return nil, bad
	}
	req := index.SearchRequest{Phrase: phrase, Limit: index.DefaultLimit}
	if limit != nil {
		req.Limit = int(*limit)
	}
	if offset != nil {
		req.Offset = int(*offset)
	}
	page, err := h.backend.SearchSessions(ctx, req)
	switch {
	case err == nil:
		hits := page.Hits
		if hits == nil {
			hits = []index.Hit{}
		}
		return searchValue{Hits: hits, HasMore: page.More}, nil
	case isCancelled(ctx, err):
		return nil, newError(codeCancelled, "session search was cancelled", nil)
	case errors.Is(err, fault.QueryInvalidQuery), errors.Is(err, fault.QueryInvalidLimit):
		return nil, badRequest("invalid payload for "+c.method, []payloadIssue{{Code: issueInvalidValue, Path: []any{searchField(err)}, Message: refusal(err)}})
	default:
		h.logFailure("session.search", err)
		if f := persistenceFailure(err); f != nil { // a log or the store cannot be read: the original names it
			return nil, newError(codeInternal, "session search failed: "+f.Message, nil)
		}
		return nil, newError(codeInternal, "session search failed", nil)
	}
}

// refusal is the words of the index's refusal of a search request: the
// message of the error in err's chain that carries the query code.
func refusal(err error) string {
	if f := faultIn(err, fault.QueryInvalidQuery, fault.QueryInvalidLimit); f != nil {
		return f.Message
	}
	return err.Error()
}

// searchField names the payload field an index refusal is about.
func searchField(err error) string {
	if errors.Is(err, fault.QueryInvalidLimit) {
		return "limit"
	}
	return "query"
}

// searchQuery reads a required search phrase: a string with something
// besides whitespace and no NUL character.
func (p *payload) searchQuery(name string) string {
	v, present := p.fields[name]
	s, ok := p.stringValue(name, v, present)
	switch {
	case !ok:
	case strings.IndexByte(s, 0) >= 0:
		p.add(issueInvalidValue, []any{name}, "must not contain a NUL character")
	case strings.TrimSpace(s) == "":
		p.add(issueTooSmall, []any{name}, "must not be blank")
	}
	return s
}

// searchValue is session.search's {hits, hasMore}.
type searchValue struct {
	Hits    []index.Hit `json:"hits"`
	HasMore bool        `json:"hasMore"`
}
