package host

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

// issueCase is one payload and the exact details.issues JSON its
// bad-request carries ("[]" when the payload is valid and the call got past
// validation).
type issueCase struct {
	name, method, payload, want string
}

// requireIssues posts each case as a client-request and compares the
// bad-request's details.issues byte for byte.
func requireIssues(t *testing.T, cases []issueCase) {
	t.Helper()
	h := newTestHandler(t, newFakeBackend())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"type":"client-request","rpcId":"z","method":"` + tc.method + `","payload":` + tc.payload + `}`
			rec := post(h, tc.method, "application/json", body)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			code, message, got := errorIssues(t, rec)
			if code != codeBadRequest {
				got = "[]"
			} else {
				require.Equal(t, "invalid payload for "+tc.method, message)
			}
			require.Equal(t, tc.want, got, tc.payload)
		})
	}
}

// errorIssues decodes an answer's error code and message and its
// details.issues as sent ("" codes for a success).
func errorIssues(t *testing.T, rec *httptest.ResponseRecorder) (code fault.Code, message, issues string) {
	t.Helper()
	var r struct {
		Result struct {
			Error *struct {
				Code    fault.Code `json:"code"`
				Message string     `json:"message"`
				Details struct {
					Issues json.RawMessage `json:"issues"`
				} `json:"details"`
			} `json:"error"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r), rec.Body.String())
	if e := r.Result.Error; e != nil {
		return e.Code, e.Message, string(e.Details.Issues)
	}
	return "", "", ""
}

func issue(code, path, message string) string {
	return `{"code":"` + code + `","path":` + path + `,"message":"` + message + `"}`
}

func issues(items ...string) string { return "[" + strings.Join(items, ",") + "]" }

// TestPayloadMustBeAnObject: anything but a JSON object is one invalid_type
// issue for the whole payload.
func TestPayloadMustBeAnObject(t *testing.T) {
	requireIssues(t, []issueCase{
		{"null", "subagent.list", `null`, issues(issue("invalid_type", `[]`, "expected object, got null"))},
		{"array", "session.list", `[]`, issues(issue("invalid_type", `[]`, "expected object, got array"))},
		{"string", "subagent.prompt", `"p"`, issues(issue("invalid_type", `[]`, "expected object, got string"))},
		{"number", "session.create", `3`, issues(issue("invalid_type", `[]`, "expected object, got number"))},
	})
}

// TestIDIsANonEmptyString: an id is required, a string, and not empty; one
// issue per id.
func TestIDIsANonEmptyString(t *testing.T) {
	requireIssues(t, []issueCase{
		{"missing", "subagent.list", `{}`, issues(issue("invalid_type", `["parentSessionId"]`, "required string is missing"))},
		{"null", "subagent.list", `{"parentSessionId":null}`, issues(issue("invalid_type", `["parentSessionId"]`, "expected string, got null"))},
		{"number", "subagent.list", `{"parentSessionId":0}`, issues(issue("invalid_type", `["parentSessionId"]`, "expected string, got number"))},
		{"boolean", "subagent.list", `{"parentSessionId":true}`, issues(issue("invalid_type", `["parentSessionId"]`, "expected string, got boolean"))},
		{"empty array", "subagent.list", `{"parentSessionId":[]}`, issues(issue("invalid_type", `["parentSessionId"]`, "expected string, got array"))},
		{"object with length", "subagent.list", `{"parentSessionId":{"length":0}}`, issues(issue("invalid_type", `["parentSessionId"]`, "expected string, got object"))},
		{"empty", "subagent.list", `{"parentSessionId":""}`, issues(issue("too_small", `["parentSessionId"]`, "must not be empty"))},
		{"valid", "subagent.list", `{"parentSessionId":"p"}`, `[]`},
		{"both ids wrong", "subagent.history", `{"parentSessionId":[],"childSessionId":""}`, issues(
			issue("invalid_type", `["parentSessionId"]`, "expected string, got array"),
			issue("too_small", `["childSessionId"]`, "must not be empty"))},
		{"session.history", "session.history", `{"sessionId":{}}`, issues(issue("invalid_type", `["sessionId"]`, "expected string, got object"))},
	})
}

// TestOptionalStringIsAbsentOrAString: session.list's cursor may be absent
// or any string; null is a wrong type, not absence.
func TestOptionalStringIsAbsentOrAString(t *testing.T) {
	requireIssues(t, []issueCase{
		{"absent", "session.list", `{}`, `[]`},
		{"empty string", "session.list", `{"cursor":""}`, `[]`},
		{"null", "session.list", `{"cursor":null}`, issues(issue("invalid_type", `["cursor"]`, "expected string, got null"))},
		{"array", "session.list", `{"cursor":[]}`, issues(issue("invalid_type", `["cursor"]`, "expected string, got array"))},
	})
}

// TestSessionCreateRules: every field is optional; the ids are non-empty,
// sessionId fits a session folder name, cwd is a non-empty path without
// NUL, and workspaceId and cwd exclude each other (whatever else is wrong,
// when both are strings).
func TestSessionCreateRules(t *testing.T) {
	both := issue("conflict", `[]`, "session.create accepts workspaceId or cwd, not both")
	requireIssues(t, []issueCase{
		{"workspaceId and cwd", "session.create", `{"workspaceId":"w","cwd":"/x"}`, issues(both)},
		{"empty workspaceId and cwd", "session.create", `{"workspaceId":"","cwd":"/x"}`, issues(
			issue("too_small", `["workspaceId"]`, "must not be empty"), both)},
		{"empty sessionId", "session.create", `{"sessionId":"","cwd":"/x","workspaceId":"w"}`, issues(
			issue("too_small", `["sessionId"]`, "must not be empty"), both)},
		{"cwd a number", "session.create", `{"workspaceId":"w","cwd":3}`, issues(issue("invalid_type", `["cwd"]`, "expected string, got number"))},
		{"cwd null", "session.create", `{"cwd":null}`, issues(issue("invalid_type", `["cwd"]`, "expected string, got null"))},
		{"cwd empty", "session.create", `{"cwd":""}`, issues(issue("too_small", `["cwd"]`, "must not be empty"))},
		{"cwd with NUL", "session.create", `{"cwd":"/a\u0000b"}`, issues(issue("invalid_value", `["cwd"]`, "must not contain a NUL character"))},
		{"sessionId too long", "session.create", `{"sessionId":"` + strings.Repeat("a", 256) + `"}`, issues(
			issue("too_big", `["sessionId"]`, "must encode to a folder name of at most 255 bytes, not 256"))},
		{"sessionId escapes too long", "session.create", `{"sessionId":"` + strings.Repeat("/", 52) + `"}`, issues(
			issue("too_big", `["sessionId"]`, "must encode to a folder name of at most 255 bytes, not 260"))},
		{"sessionId 255 bytes", "session.create", `{"sessionId":"` + strings.Repeat("a", 255) + `"}`, `[]`},
		{"all wrong", "session.create", `{"workspaceId":[],"cwd":[],"sessionId":{}}`, issues(
			issue("invalid_type", `["workspaceId"]`, "expected string, got array"),
			issue("invalid_type", `["cwd"]`, "expected string, got array"),
			issue("invalid_type", `["sessionId"]`, "expected string, got object"))},
	})
}

// TestOptionalIntegers: beforeSeq is an integer >= 0 and maxMessages one >=
// 1, both at most 2^53-1 and absent only when their key is. A number too
// large for a float64 is too big (or too small) rather than unreadable.
func TestOptionalIntegers(t *testing.T) {
	hist := func(extra string) string { return `{"parentSessionId":"p","childSessionId":"c",` + extra + `}` }
	requireIssues(t, []issueCase{
		{"maxMessages 0", "subagent.history", hist(`"maxMessages":0`), issues(issue("too_small", `["maxMessages"]`, "must be at least 1"))},
		{"maxMessages 1", "subagent.history", hist(`"maxMessages":1`), `[]`},
		{"beforeSeq 0", "subagent.history", hist(`"beforeSeq":0`), `[]`},
		{"beforeSeq -1", "subagent.history", hist(`"beforeSeq":-1`), issues(issue("too_small", `["beforeSeq"]`, "must be at least 0"))},
		{"beforeSeq 1.5", "subagent.history", hist(`"beforeSeq":1.5`), issues(issue("invalid_type", `["beforeSeq"]`, "expected integer, got 1.5"))},
		{"maxMessages 2e0", "subagent.history", hist(`"maxMessages":2e0`), `[]`},
		{"maxMessages string", "subagent.history", hist(`"maxMessages":"5"`), issues(issue("invalid_type", `["maxMessages"]`, "expected integer, got string"))},
		{"maxMessages null", "subagent.history", hist(`"maxMessages":null`), issues(issue("invalid_type", `["maxMessages"]`, "expected integer, got null"))},
		{"maxMessages 2^53", "subagent.history", hist(`"maxMessages":9007199254740992`), issues(issue("too_big", `["maxMessages"]`, "must be at most 9007199254740991"))},
		{"maxMessages 2^53-1", "subagent.history", hist(`"maxMessages":9007199254740991`), `[]`},
		{"beforeSeq 1e400", "session.history", `{"sessionId":"s","beforeSeq":1e400}`, issues(issue("too_big", `["beforeSeq"]`, "must be at most 9007199254740991"))},
		{"maxMessages -1e400", "session.history", `{"sessionId":"s","maxMessages":-1e400}`, issues(issue("too_small", `["maxMessages"]`, "must be at least 1"))},
		{"both null", "session.history", `{"sessionId":"s","beforeSeq":null,"maxMessages":null}`, issues(
			issue("invalid_type", `["beforeSeq"]`, "expected integer, got null"),
			issue("invalid_type", `["maxMessages"]`, "expected integer, got null"))},
	})
}

// TestContentIsAnArrayOfTypedObjects: content is required, an array
// (possibly empty) of objects each with a string type.
func TestContentIsAnArrayOfTypedObjects(t *testing.T) {
	prompt := func(content string) string {
		return `{"parentSessionId":"p","childSessionId":"c","content":` + content + `}`
	}
	requireIssues(t, []issueCase{
		{"missing", "subagent.prompt", `{"parentSessionId":"p","childSessionId":"c"}`, issues(issue("invalid_type", `["content"]`, "required array is missing"))},
		{"null", "subagent.prompt", prompt(`null`), issues(issue("invalid_type", `["content"]`, "expected array, got null"))},
		{"object", "subagent.prompt", prompt(`{"type":"text"}`), issues(issue("invalid_type", `["content"]`, "expected array, got object"))},
		{"empty", "subagent.prompt", prompt(`[]`), `[]`},
		{"blocks not objects", "subagent.prompt", prompt(`[5,null,[]]`), issues(
			issue("invalid_type", `["content",0]`, "expected object, got number"),
			issue("invalid_type", `["content",1]`, "expected object, got null"),
			issue("invalid_type", `["content",2]`, "expected object, got array"))},
		{"type missing", "subagent.prompt", prompt(`[{"text":"x"}]`), issues(issue("invalid_type", `["content",0,"type"]`, "required string is missing"))},
		{"type not a string", "subagent.prompt", prompt(`[{"type":"text"},{"type":5}]`), issues(issue("invalid_type", `["content",1,"type"]`, "expected string, got number"))},
		{"other keys kept", "subagent.prompt", prompt(`[{"type":"image","data":"x"}]`), `[]`},
		{"session.prompt", "session.prompt", `{"sessionId":"s","mode":"queue","content":"hi"}`, issues(issue("invalid_type", `["content"]`, "expected array, got string"))},
	})
}

// TestPromptModeIsQueueOrSteer: session.prompt's mode is required and one
// of the two values.
func TestPromptModeIsQueueOrSteer(t *testing.T) {
	want := issues(issue("invalid_value", `["mode"]`, `expected one of \"queue\", \"steer\"`))
	requireIssues(t, []issueCase{
		{"queue", "session.prompt", `{"sessionId":"s","mode":"queue","content":[]}`, `[]`},
		{"steer", "session.prompt", `{"sessionId":"s","mode":"steer","content":[]}`, `[]`},
		{"missing", "session.prompt", `{"sessionId":"s","content":[]}`, want},
		{"null", "session.prompt", `{"sessionId":"s","mode":null,"content":[]}`, want},
		{"other", "session.prompt", `{"sessionId":"s","mode":"Queue","content":[]}`, want},
	})
}
