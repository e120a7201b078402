package host

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// response is a decoded server-response.
type response struct {
	Type   string `json:"type"`
	RPCID  string `json:"rpcId"`
	Result struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error *struct {
			Code    fault.Code     `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	} `json:"result"`
}

func newTestHandler(t *testing.T, b rpcBackend) *Handler {
	t.Helper()
	h := newHandler(b, Options{})
	t.Cleanup(h.Close)
	return h
}

// post sends a raw body to /api/<path> from a loopback page.
func post(h http.Handler, path, contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7410/api/"+path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// callRPC sends a well-formed client-request and decodes the 200 response.
func callRPC(t *testing.T, h http.Handler, method string, payload any) response {
	t.Helper()
	return callRPCContext(t, context.Background(), h, method, payload)
}

func callRPCContext(t *testing.T, ctx context.Context, h http.Handler, method string, payload any) response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"type": "client-request", "rpcId": "r-" + method, "method": method, "payload": payload})
	require.NoError(t, err)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:7410/api/"+method, strings.NewReader(string(body)))
	req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decodeResponse(t, rec)
}

func decodeResponse(t *testing.T, rec *httptest.ResponseRecorder) response {
	t.Helper()
	var r response
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r), rec.Body.String())
	require.Equal(t, "server-response", r.Type)
	return r
}

// requireError asserts a business error with its exact code, message and details.
func requireError(t *testing.T, r response, code fault.Code, message string, details map[string]any) {
	t.Helper()
	require.False(t, r.Result.OK, "expected an error, got %s", r.Result.Value)
	require.NotNil(t, r.Result.Error)
	require.Equal(t, code, r.Result.Error.Code)
	require.Equal(t, message, r.Result.Error.Message)
	if details == nil {
		details = map[string]any{}
	}
	require.Equal(t, details, r.Result.Error.Details)
}

func TestCarrierStatuses(t *testing.T) {
	b := newFakeBackend()
	h := newTestHandler(t, b)
	valid := `{"type":"client-request","rpcId":"r1","method":"session.list","payload":{}}`
	cases := []struct {
		name, method, path, contentType, body string
		status                                int
		text                                  string
	}{
		{"unknown method", http.MethodPost, "nope.list", "application/json", valid, 404, "not found"},
		{"GET on a method", http.MethodGet, "session.list", "", "", 404, "not found"},
		{"PUT on a method", http.MethodPut, "session.list", "application/json", valid, 404, "not found"},
		{"POST on the stream", http.MethodPost, "events", "application/json", valid, 404, "not found"},
		{"text/plain", http.MethodPost, "session.list", "text/plain", valid, 415, "content type must be application/json"},
		{"form", http.MethodPost, "session.list", "application/x-www-form-urlencoded", valid, 415, "content type must be application/json"},
		{"not JSON", http.MethodPost, "session.list", "application/json", "{nope", 400, "body is not JSON"},
		{"empty body", http.MethodPost, "session.list", "application/json", "", 400, "body is not JSON"},
		{"media type params", http.MethodPost, "session.list", " Application/JSON ; charset=utf-8", valid, 200, ""},
		// req.json() is undici's utf8DecodeBytes (drops a leading BOM, then
		// decodes with a default TextDecoder, which drops one more), then
		// JSON.parse: up to two leading BOMs are dropped (checked in node).
		{"a UTF-8 BOM", http.MethodPost, "session.list", "application/json", "\uFEFF" + valid, 200, ""},
		{"two BOMs", http.MethodPost, "session.list", "application/json", "\uFEFF\uFEFF" + valid, 200, ""},
		{"three BOMs", http.MethodPost, "session.list", "application/json", "\uFEFF\uFEFF\uFEFF" + valid, 400, "body is not JSON"},
		{"a BOM after whitespace", http.MethodPost, "session.list", "application/json", " \uFEFF" + valid, 400, "body is not JSON"},
		// The original's order: non-POST or outside /api/ → 404, then the
		// media type → 415, then the body → 400, only then the method → 404.
		{"unknown method, text/plain", http.MethodPost, "nope", "text/plain", "{}", 415, "content type must be application/json"},
		{"unknown method, no media type", http.MethodPost, "nope", "", "{}", 415, "content type must be application/json"},
		{"unknown method, not JSON", http.MethodPost, "nope", "application/json", "{bad", 400, "body is not JSON"},
		{"unknown method, empty name", http.MethodPost, "", "application/json", valid, 404, "not found"},
		{"GET on an unknown method", http.MethodGet, "nope", "text/plain", "{bad", 404, "not found"},
		// The original routes on the WHATWG pathname, which keeps %2E.
		{"percent-encoded method", http.MethodPost, "subagent%2Elist", "application/json",
			`{"type":"client-request","rpcId":"r1","method":"subagent.list","payload":{"parentSessionId":"p"}}`, 404, "not found"},
		{"percent-encoded letter", http.MethodPost, "session%2elist", "application/json", valid, 404, "not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://localhost/api/"+tc.path, strings.NewReader(tc.body))
			req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code)
			if tc.text != "" {
				require.Equal(t, tc.text, rec.Body.String())
			}
		})
	}
}

// TestLargeBodiesAreAnsweredNormally: the original reads the whole body
// with no limit, so realistic large payloads (a padded envelope, base64
// images) are answered like small ones; only a body over maxBodyBytes
// (64 MiB, a guard against memory exhaustion) is a 413.
func TestLargeBodiesAreAnsweredNormally(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	padded := `{"type":"client-request","rpcId":"big","method":"session.list","payload":{"pad":"` +
		strings.Repeat("x", 2<<20) + `"}}`
	rec := post(h, "session.list", "application/json", padded)
	require.Equal(t, http.StatusOK, rec.Code)
	r := decodeResponse(t, rec)
	require.Equal(t, "big", r.RPCID)
	require.True(t, r.Result.OK)

	require.Equal(t, 64<<20, maxBodyBytes)
	// A body of exactly maxBodyBytes is read (and is not JSON: 400); one
	// byte more is the 413. Streamed, so the test allocates nothing large.
	for _, tc := range []struct {
		size   int64
		status int
		text   string
	}{
		{maxBodyBytes, 400, "body is not JSON"},
		{maxBodyBytes + 1, 413, "request body too large"},
	} {
		body := io.LimitReader(repeatByte('x'), tc.size)
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7410/api/session.list", body)
		req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, tc.status, rec.Code)
		require.Equal(t, tc.text, rec.Body.String())
	}
}

// repeatByte is an endless reader of one byte.
type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestCarrierPercentEncodedStreamPathIsA404: GET /api/events%2Emux is not
// the stream in the original (its pathname keeps %2E), and /api has exactly
// the original's two streams (the page's combined one is GET /events); the
// deadline keeps a wrongly opened stream from hanging the test.
func TestCarrierPercentEncodedStreamPathIsA404(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	for _, path := range []string{"/api/events%2Emux", "/api/events%2Ehost", "/api/%65vents", "/api/events", "/api/events.all"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://localhost"+path, nil)
		req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		cancel()
		require.Equal(t, http.StatusNotFound, rec.Code, path)
		require.Equal(t, "not found", rec.Body.String(), path)
	}
}

func TestCarrierPathOutsideAPIIsA404BeforeTheMediaType(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	req := httptest.NewRequest(http.MethodPost, "http://localhost/api", strings.NewReader("{bad"))
	req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
	req.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "not found", rec.Body.String())
}

// TestRespondIsAlwaysNotPending: POST /api/respond carries a client-response
// to a server-initiated request. It is handled after the carrier checks
// (404 non-POST, 415, 413/400 body) and before the method lookup, as in the
// original's handler. This runtime never issues server-initiated requests,
// so a valid client-response (clientResponseSchema: type "client-response",
// string rpcId, result {ok:true, value} or {ok:false, error: RpcError}) is
// {"accepted":false,"reason":"not-pending"} and anything else
// {"accepted":false,"reason":"bad-response"}, both HTTP 200. The expected
// reasons were computed with zod 4.4.3 on the original's clientResponseSchema.
func TestRespondIsAlwaysNotPending(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	cases := []struct {
		name, body, reason string
	}{
		{"ok value object", `{"type":"client-response","rpcId":"r1","result":{"ok":true,"value":{"a":1}}}`, "not-pending"},
		{"ok value null", `{"type":"client-response","rpcId":"","result":{"ok":true,"value":null}}`, "not-pending"},
		{"ok extra keys", `{"type":"client-response","rpcId":"r1","result":{"ok":true,"value":1,"error":"x"},"extra":1}`, "not-pending"},
		{"cancelled", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"cancelled","message":"m","details":{}}}}`, "not-pending"},
		{"bad-request any issues", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"bad-request","message":"m","details":{"issues":[1,"x",null,{}]}}}}`, "not-pending"},
		{"session-conflict optional", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"session-conflict","message":"m","details":{"sessionId":"s","requestedCwd":"/a"}}}}`, "not-pending"},
		{"session-conflict existing null", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"session-conflict","message":"m","details":{"sessionId":"s","requestedCwd":"/a","existingCwd":null}}}}`, "bad-response"},
		{"settings-conflict numbers", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"settings-conflict","message":"m","details":{"ns":"n","expected":1.5,"actual":-2}}}}`, "not-pending"},
		{"settings-conflict string number", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"settings-conflict","message":"m","details":{"ns":"n","expected":"1","actual":2}}}}`, "bad-response"},
		{"catalog diagnostic", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"subagent-catalog-diagnostic","message":"m","details":{"parentSessionId":"p","childSessionId":"c","reason":"corrupt"}}}}`, "not-pending"},
		{"catalog diagnostic bad reason", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"subagent-catalog-diagnostic","message":"m","details":{"parentSessionId":"p","childSessionId":"c","reason":"gone"}}}}`, "bad-response"},
		{"not-delivered", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"subagent-not-delivered","message":"m","details":{"childSessionId":"c"}}}}`, "not-pending"},
		{"delivery-unavailable", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"subagent-delivery-unavailable","message":"m","details":{"childSessionId":"c"}}}}`, "bad-response"},
		{"agent-busy empty details", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"agent-busy","message":"m","details":{}}}}`, "bad-response"},
		{"internal details array", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"internal","message":"m","details":[]}}}`, "bad-response"},
		{"internal details null", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"internal","message":"m","details":null}}}`, "bad-response"},
		{"internal no details", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"internal","message":"m"}}}`, "bad-response"},
		{"internal message number", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"internal","message":1,"details":{}}}}`, "bad-response"},
		{"unknown code", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":{"code":"nope","message":"m","details":{}}}}`, "bad-response"},
		{"error not object", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"error":"x"}}`, "bad-response"},
		{"ok false no error", `{"type":"client-response","rpcId":"r1","result":{"ok":false,"value":1}}`, "bad-response"},
		{"ok true no value", `{"type":"client-response","rpcId":"r1","result":{"ok":true}}`, "bad-response"},
		{"ok string", `{"type":"client-response","rpcId":"r1","result":{"ok":"true","value":1}}`, "bad-response"},
		{"ok missing", `{"type":"client-response","rpcId":"r1","result":{"value":1}}`, "bad-response"},
		{"result array", `{"type":"client-response","rpcId":"r1","result":[]}`, "bad-response"},
		{"result missing", `{"type":"client-response","rpcId":"r1"}`, "bad-response"},
		{"rpcId number", `{"type":"client-response","rpcId":1,"result":{"ok":true,"value":1}}`, "bad-response"},
		{"rpcId missing", `{"type":"client-response","result":{"ok":true,"value":1}}`, "bad-response"},
		{"type client-request", `{"type":"client-request","rpcId":"r1","result":{"ok":true,"value":1}}`, "bad-response"},
		{"type missing", `{"rpcId":"r1","result":{"ok":true,"value":1}}`, "bad-response"},
		{"a client-request", `{"type":"client-request","rpcId":"r1","method":"respond","payload":{}}`, "bad-response"},
		{"array body", `[1]`, "bad-response"},
		{"string body", `"x"`, "bad-response"},
		{"null body", `null`, "bad-response"},
		{"number body", `1`, "bad-response"},
		{"expected overflows to Infinity", `{"type":"client-response","rpcId":"r","result":{"ok":false,"error":{"code":"settings-conflict","message":"m","details":{"ns":"n","expected":1e400,"actual":1}}}}`, "bad-response"},
		{"expected underflows to 0", `{"type":"client-response","rpcId":"r","result":{"ok":false,"error":{"code":"settings-conflict","message":"m","details":{"ns":"n","expected":1e-400,"actual":1}}}}`, "not-pending"},
		{"last duplicate key wins (bad)", `{"type":"client-response","type":"x","rpcId":"r","result":{"ok":true,"value":1}}`, "bad-response"},
		{"last duplicate key wins (good)", `{"type":"x","type":"client-response","rpcId":"r","result":{"ok":true,"value":1}}`, "not-pending"},
		{"spaces everywhere", ` { "type" : "client-response" , "rpcId" : "r" , "result" : { "ok" : false , "error" : { "code" : "settings-conflict" , "message" : "m" , "details" : { "ns" : "n" , "expected" : 1 , "actual" : 2 } } } } `, "not-pending"},
		{"BOM and whitespace", "\uFEFF" + ` {"type":"client-response","rpcId":"r","result":{"ok":true,"value":1}} `, "not-pending"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(h, "respond", "application/json", tc.body)
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, `{"accepted":false,"reason":"`+tc.reason+`"}`, rec.Body.String())
			require.Equal(t, http.Header{"Content-Type": {"application/json"}}, rec.Header())
		})
	}
}

// TestRespondCarrierOrder: /api/respond goes through the same fence and
// carrier checks as a method, in the original's order, and only the exact
// pathname /api/respond is the route.
func TestRespondCarrierOrder(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	valid := `{"type":"client-response","rpcId":"r1","result":{"ok":true,"value":{}}}`
	cases := []struct {
		name, method, host, path, contentType, body string
		status                                      int
		text                                        string
	}{
		{"untrusted host first", http.MethodGet, "evil.example", "respond", "text/plain", "{bad", 403, "forbidden"},
		{"GET", http.MethodGet, "", "respond", "application/json", valid, 404, "not found"},
		{"PUT", http.MethodPut, "", "respond", "application/json", valid, 404, "not found"},
		{"text/plain", http.MethodPost, "", "respond", "text/plain", valid, 415, "content type must be application/json"},
		{"no media type", http.MethodPost, "", "respond", "", valid, 415, "content type must be application/json"},
		{"not JSON", http.MethodPost, "", "respond", "application/json", "{bad", 400, "body is not JSON"},
		{"empty body", http.MethodPost, "", "respond", "application/json", "", 400, "body is not JSON"},
		{"percent-encoded", http.MethodPost, "", "%72espond", "application/json", valid, 404, "not found"},
		{"trailing slash", http.MethodPost, "", "respond/", "application/json", valid, 404, "not found"},
		{"media type params", http.MethodPost, "", "respond", "Application/Json; charset=utf-8", valid, 200,
			`{"accepted":false,"reason":"not-pending"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1:7410/api/"+tc.path, strings.NewReader(tc.body))
			req.RemoteAddr = "127.0.0.1:50000" // a page on this machine
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code)
			require.Equal(t, tc.text, rec.Body.String())
		})
	}
}

func TestHandlerPanicIsA500(t *testing.T) {
	b := newFakeBackend()
	b.panicMessage = "boom"
	rec := post(newTestHandler(t, b), "session.list", "application/json",
		`{"type":"client-request","rpcId":"r1","method":"session.list","payload":{}}`)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Equal(t, "handler failure: boom", rec.Body.String())
}

func TestEnvelopeValidation(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	cases := []struct {
		name, body, rpcID, message string
		issuePaths                 []string
	}{
		{"array body", `[]`, invalidRequestID, "invalid client-request message", []string{""}},
		{"numeric rpcId", `{"type":"client-request","rpcId":7,"method":"session.list","payload":{}}`,
			invalidRequestID, "invalid client-request message", []string{"rpcId"}},
		{"wrong type keeps a string rpcId", `{"type":"server-request","rpcId":"r2","method":"session.list","payload":{}}`,
			"r2", "invalid client-request message", []string{"type"}},
		{"missing method and payload", `{"type":"client-request","rpcId":"r3"}`,
			"r3", "invalid client-request message", []string{"method", "payload"}},
		{"method mismatch", `{"type":"client-request","rpcId":"r4","method":"subagent.list","payload":{}}`,
			"r4", `method "subagent.list" does not match path "session.list"`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(h, "session.list", "application/json", tc.body)
			require.Equal(t, http.StatusOK, rec.Code)
			r := decodeResponse(t, rec)
			require.Equal(t, tc.rpcID, r.RPCID)
			require.Equal(t, codeBadRequest, r.Result.Error.Code)
			require.Equal(t, tc.message, r.Result.Error.Message)
			require.Equal(t, tc.issuePaths, issuePaths(r))
		})
	}
}

// issuePaths joins each issue's path with dots.
func issuePaths(r response) []string {
	issues, _ := r.Result.Error.Details["issues"].([]any)
	var paths []string
	for _, raw := range issues {
		issue := raw.(map[string]any)
		var parts []string
		for _, p := range issue["path"].([]any) {
			b, _ := json.Marshal(p)
			parts = append(parts, strings.Trim(string(b), `"`))
		}
		paths = append(paths, strings.Join(parts, "."))
	}
	return paths
}

func TestPayloadValidation(t *testing.T) {
	b := newFakeBackend()
	h := newTestHandler(t, b)
	text := []any{map[string]any{"type": "text", "text": "hi"}}
	cases := []struct {
		method     string
		payload    any
		issuePaths []string
	}{
		{"subagent.list", map[string]any{}, []string{"parentSessionId"}},
		{"subagent.list", map[string]any{"parentSessionId": ""}, []string{"parentSessionId"}},
		{"subagent.list", map[string]any{"parentSessionId": 3}, []string{"parentSessionId"}},
		{"subagent.list", "p1", []string{""}},
		{"subagent.history", map[string]any{"parentSessionId": "p", "childSessionId": "c", "maxMessages": 0}, []string{"maxMessages"}},
		{"subagent.history", map[string]any{"parentSessionId": "p", "childSessionId": "c", "beforeSeq": -1}, []string{"beforeSeq"}},
		{"subagent.history", map[string]any{"parentSessionId": "p", "childSessionId": "c", "beforeSeq": 1.5}, []string{"beforeSeq"}},
		{"subagent.history", map[string]any{"parentSessionId": "p", "childSessionId": "c", "maxMessages": nil}, []string{"maxMessages"}},
		{"subagent.history", map[string]any{"parentSessionId": "p", "childSessionId": "c", "beforeSeq": nil}, []string{"beforeSeq"}},
		{"session.history", map[string]any{"sessionId": "s", "beforeSeq": nil, "maxMessages": nil}, []string{"beforeSeq", "maxMessages"}},
		{"subagent.history", map[string]any{"parentSessionId": "p"}, []string{"childSessionId"}},
		{"subagent.prompt", map[string]any{"parentSessionId": "p", "childSessionId": "c", "mode": "bogus"}, []string{"content"}},
		{"subagent.prompt", map[string]any{"parentSessionId": "p", "childSessionId": "c"}, []string{"content"}},
		{"subagent.prompt", map[string]any{"parentSessionId": "p", "childSessionId": "c", "content": map[string]any{"type": "text"}}, []string{"content"}},
		{"subagent.prompt", map[string]any{"parentSessionId": "p", "childSessionId": "c", "content": []any{map[string]any{"text": "x"}}}, []string{"content.0.type"}},
		{"subagent.prompt", map[string]any{"parentSessionId": "p", "childSessionId": "c", "content": []any{map[string]any{"type": 5}}}, []string{"content.0.type"}},
		{"subagent.prompt", map[string]any{"parentSessionId": "p", "childSessionId": "c", "content": []any{"hi", nil}}, []string{"content.0", "content.1"}},
		{"session.history", map[string]any{"sessionId": "s", "maxMessages": "5"}, []string{"maxMessages"}},
		{"session.prompt", map[string]any{"content": text}, []string{"sessionId", "mode"}},
		{"session.list", nil, []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			r := callRPC(t, h, tc.method, tc.payload)
			require.Equal(t, "r-"+tc.method, r.RPCID)
			require.Equal(t, codeBadRequest, r.Result.Error.Code)
			require.Equal(t, "invalid payload for "+tc.method, r.Result.Error.Message)
			require.Equal(t, tc.issuePaths, issuePaths(r))
		})
	}
	require.Empty(t, b.callLog(), "an invalid payload never reaches the backend")
}

func TestSuccessEchoesRPCIDAndDropsUnknownKeys(t *testing.T) {
	b := newFakeBackend()
	b.summaries = []sessionSummary{{ID: "s1", CreatedAt: 5, UpdatedAt: 9, Running: true, Live: true}}
	h := newTestHandler(t, b)
	rec := post(h, "session.list", "application/json",
		`{"type":"client-request","rpcId":"","method":"session.list","payload":{"extra":1},"more":true}`)
	r := decodeResponse(t, rec)
	require.Equal(t, "", r.RPCID)
	require.True(t, r.Result.OK)
	require.JSONEq(t, `{"items":[{"sessionId":"s1","updatedAt":9,"running":true,"blank":false,"live":true}]}`, string(r.Result.Value))
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
}

func TestPageIsServedWithAStrictPolicy(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	for _, path := range []string{"/", "/app.js", "/style.css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusOK, rec.Code, path)
		require.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'self'")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/missing.js", nil))
	require.Equal(t, http.StatusNotFound, rec.Code)
}

// FuzzDecodeEnvelope: any body either decodes to a call for the path or to
// a bad-request that carries issues and an rpcId to echo; nothing panics.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(`{"type":"client-request","rpcId":"r1","method":"subagent.list","payload":{"parentSessionId":"p"}}`)
	f.Add(`{"type":"client-request","rpcId":3,"method":"x"}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, body string) {
		c, bad := decodeEnvelope([]byte(body), "subagent.list")
		if bad == nil {
			require.Equal(t, "subagent.list", c.method)
			return
		}
		require.Equal(t, codeBadRequest, bad.Code)
		require.IsType(t, issueDetails{}, bad.Details)
		require.NotNil(t, bad.Details.(issueDetails).Issues)
	})
}

// FuzzPromptPayload: the payload reader never panics and either yields a
// complete address with content (possibly empty, never nil) or names at
// least one issue.
func FuzzPromptPayload(f *testing.F) {
	f.Add(`{"parentSessionId":"p","childSessionId":"c","content":[{"type":"text","text":"hi"}]}`)
	f.Add(`{"parentSessionId":"","mode":"one-shot","content":[{"type":1}]}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, raw string) {
		p := readPayload(json.RawMessage(raw))
		parent, child := p.sessionID("parentSessionId"), p.sessionID("childSessionId")
		content := p.content("content")
		if len(p.issues) == 0 {
			require.NotEmpty(t, parent)
			require.NotEmpty(t, child)
			require.NotNil(t, content)
		}
	})
}

// TestEnvelopeIssues pins the envelope's issues byte for byte: type must
// be "client-request", rpcId and method strings, payload present, each
// reported in that order.
func TestEnvelopeIssues(t *testing.T) {
	cases := []struct{ name, body, issues string }{
		{"not an object", `5`, `[{"code":"invalid_type","path":[],"message":"expected object, got number"}]`},
		{"all wrong", `{"type":1,"rpcId":2,"method":3}`, `[` +
			`{"code":"invalid_value","path":["type"],"message":"expected \"client-request\""},` +
			`{"code":"invalid_type","path":["rpcId"],"message":"expected string, got number"},` +
			`{"code":"invalid_type","path":["method"],"message":"expected string, got number"},` +
			`{"code":"invalid_type","path":["payload"],"message":"required value is missing"}]`},
		{"rpcId missing", `{"type":"client-request","method":"subagent.list","payload":{}}`,
			`[{"code":"invalid_type","path":["rpcId"],"message":"required string is missing"}]`},
	}
	h := newTestHandler(t, newFakeBackend())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(h, "subagent.list", "application/json", tc.body)
			require.Equal(t, http.StatusOK, rec.Code)
			code, message, issues := errorIssues(t, rec)
			require.Equal(t, codeBadRequest, code)
			require.Equal(t, "invalid client-request message", message)
			require.Equal(t, tc.issues, issues)
		})
	}
}

// TestWireJSONIsWhatJSONStringifyWrites: responses and frames carry <, >, &
// and U+2028/U+2029 raw and a response has no trailing newline, as the
// original's Response.json and JSON.stringify write them.
func TestWireJSONIsWhatJSONStringifyWrites(t *testing.T) {
	h := newTestHandler(t, newFakeBackend())
	rec := post(h, "session.history", "application/json",
		`{"type":"client-request","rpcId":"r","method":"session.history","payload":{"sessionId":"a<b>&c\u2028"}}`)
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	require.Contains(t, body, `"message":"session \"a<b>&c`+"\u2028"+`\" not found"`)
	require.False(t, strings.HasSuffix(body, "\n"), "Response.json writes no newline")

	frame, err := sseData("session/event", map[string]string{"text": "a<b>&c\u2029"})
	require.NoError(t, err)
	require.Contains(t, string(frame), `"payload":{"text":"a<b>&c`+"\u2029"+`"}`)
}

// TestCarrierHeadersAreTheOriginals: a unary response is Response.json's
// (content-type application/json, nothing else), a carrier failure is
// new Response(text)'s (text/plain;charset=UTF-8), the fence's 403 is
// res.writeHead(403) with no content type, and a stream is sseResponse's
// (text/event-stream, no-cache). Transport headers (Date, lengths) aside.
func TestCarrierHeadersAreTheOriginals(t *testing.T) {
	srv := serveTestHandler(t, newFakeBackend())
	headers := func(method, path, contentType, body string, host string) (int, map[string]string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		got := map[string]string{}
		for k, v := range resp.Header {
			switch k {
			case "Date", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive":
				continue
			}
			got[k] = strings.Join(v, ", ")
		}
		return resp.StatusCode, got
	}
	valid := `{"type":"client-request","rpcId":"r1","method":"session.list","payload":{}}`
	text := map[string]string{"Content-Type": "text/plain;charset=UTF-8"}

	status, h := headers(http.MethodPost, "/api/session.list", "application/json", valid, "")
	require.Equal(t, 200, status)
	require.Equal(t, map[string]string{"Content-Type": "application/json"}, h)
	status, h = headers(http.MethodPost, "/api/session.list", "application/json", `{"type":1}`, "")
	require.Equal(t, 200, status)
	require.Equal(t, map[string]string{"Content-Type": "application/json"}, h)
	for _, tc := range []struct {
		method, path, contentType, body string
		status                          int
	}{
		{http.MethodPost, "/api/nope", "application/json", valid, 404},
		{http.MethodGet, "/api/session.list", "", "", 404},
		{http.MethodPost, "/api/session.list", "text/plain", valid, 415},
		{http.MethodPost, "/api/session.list", "application/json", "{bad", 400},
	} {
		status, h = headers(tc.method, tc.path, tc.contentType, tc.body, "")
		require.Equal(t, tc.status, status, tc.path)
		require.Equal(t, text, h, tc.path)
	}
	status, h = headers(http.MethodPost, "/api/session.list", "application/json", valid, "evil.example")
	require.Equal(t, 403, status)
	require.Equal(t, map[string]string{}, h)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events.mux", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	delete(resp.Header, "Date")
	require.Equal(t, http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}}, resp.Header)
}
