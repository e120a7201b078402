package host

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/index"
	"github.com/stretchr/testify/require"
)

func TestSessionSearchAnswersHitsAndPages(t *testing.T) {
	b := newFakeBackend()
	b.searchPage = index.Page{Hits: []index.Hit{
		{SessionID: "s1", Seq: 4, Type: "user/message", Snippet: "the brown fox"},
		{SessionID: "s2", Seq: 0, Type: "assistant/message", Snippet: "…a brown fox"},
	}, More: true}
	h := newTestHandler(t, b)
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":true,"value":{"hits":[`+
		`{"sessionId":"s1","seq":4,"type":"user/message","snippet":"the brown fox"},`+
		`{"sessionId":"s2","seq":0,"type":"assistant/message","snippet":"…a brown fox"}],"hasMore":true}}}`,
		rawCall(t, h, "session.search", `{"query":"brown fox","limit":2,"offset":3,"extra":true}`))
	b.searchPage = index.Page{}
	require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":true,"value":{"hits":[],"hasMore":false}}}`,
		rawCall(t, h, "session.search", `{"query":"NOT \"x\" OR y*"}`))
	require.Equal(t, []string{`SearchSessions "brown fox" 2 3`, `SearchSessions "NOT \"x\" OR y*" 20 0`}, b.callLog(),
		"the phrase goes on as sent (the index quotes it); limit defaults to 20, offset to 0")
}

func TestSessionSearchNamesTheBadField(t *testing.T) {
	bad := func(issues string) string {
		return `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{"code":"bad-request","message":"invalid payload for session.search",` +
			`"details":{"issues":[` + issues + `]}}}}`
	}
	issue := func(code, path, message string) string {
		return fmt.Sprintf(`{"code":%q,"path":[%q],"message":%q}`, code, path, message)
	}
	for payload, want := range map[string]string{
		`[]`:                                 bad(`{"code":"invalid_type","path":[],"message":"expected object, got array"}`),
		`{}`:                                 bad(issue("invalid_type", "query", "required string is missing")),
		`{"query":7}`:                        bad(issue("invalid_type", "query", "expected string, got number")),
		`{"query":null}`:                     bad(issue("invalid_type", "query", "expected string, got null")),
		`{"query":" \t\n"}`:                  bad(issue("too_small", "query", "must not be blank")),
		`{"query":"a\u0000b"}`:               bad(issue("invalid_value", "query", "must not contain a NUL character")),
		`{"query":"x","limit":0}`:            bad(issue("too_small", "limit", "must be at least 1")),
		`{"query":"x","limit":101}`:          bad(issue("too_big", "limit", "must be at most 100")),
		`{"query":"x","limit":1.5}`:          bad(issue("invalid_type", "limit", "expected integer, got 1.5")),
		`{"query":"x","limit":"5"}`:          bad(issue("invalid_type", "limit", "expected integer, got string")),
		`{"query":"x","offset":-1}`:          bad(issue("too_small", "offset", "must be at least 0")),
		`{"query":"","limit":0,"offset":-1}`: bad(issue("too_small", "query", "must not be blank") + "," + issue("too_small", "limit", "must be at least 1") + "," + issue("too_small", "offset", "must be at least 0")),
	} {
		b := newFakeBackend()
		require.Equal(t, want, rawCall(t, newTestHandler(t, b), "session.search", payload), payload)
		require.Empty(t, b.callLog(), "a bad payload reaches no backend: %s", payload)
	}
}

func TestSessionSearchFailures(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fault.Error{Code: fault.QueryInvalidQuery, Message: "bad words"}, `"code":"bad-request","message":"invalid payload for session.search","details":{"issues":[{"code":"invalid_value","path":["query"],"message":"bad words"}]}`},
		{wrap(codeInternal, &fault.Error{Code: fault.QueryInvalidLimit, Message: "bad limit"}), `"code":"bad-request","message":"invalid payload for session.search","details":{"issues":[{"code":"invalid_value","path":["limit"],"message":"bad limit"}]}`},
		{wrap(codeCancelled, context.Canceled), `"code":"cancelled","message":"session search was cancelled","details":{}`},
		{&fault.Error{Code: fault.QueryIndexFailed, Message: "disk full"}, `"code":"internal","message":"session search failed","details":{}`},
		{errors.New("boom"), `"code":"internal","message":"session search failed","details":{}`},
	} {
		b := newFakeBackend()
		b.searchErr = tc.err
		require.Equal(t, `{"type":"server-response","rpcId":"r","result":{"ok":false,"error":{`+tc.want+`}}}`,
			rawCall(t, newTestHandler(t, b), "session.search", `{"query":"x"}`))
	}
}
