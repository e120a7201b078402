package host

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zodCase is one payload and the exact details.issues JSON that zod 4.4.3
// reports for it with the original's schemas (the want texts were produced
// by real zod 4.4.3 under node, not written by hand).
type zodCase struct {
	method  string
	payload string
	want    string
}

// requireZodIssues posts each case as a client-request and compares the
// bad-request's details.issues byte for byte ("[]" when the payload is valid
// and the call got past validation).
func requireZodIssues(t *testing.T, cases []zodCase) {
	t.Helper()
	h := newTestHandler(t, newFakeBackend())
	for _, tc := range cases {
		body := `{"type":"client-request","rpcId":"z","method":"` + tc.method + `","payload":` + tc.payload + `}`
		rec := post(h, tc.method, "application/json", body)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var r struct {
			Result struct {
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
					Details struct {
						Issues json.RawMessage `json:"issues"`
					} `json:"details"`
				} `json:"error"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r), rec.Body.String())
		got := "[]"
		if e := r.Result.Error; e != nil && e.Code == CodeBadRequest {
			require.Equal(t, "invalid payload for "+tc.method, e.Message, "%s %s", tc.method, tc.payload)
			got = string(e.Details.Issues)
		}
		assert.Equal(t, tc.want, got, "%s %s", tc.method, tc.payload)
	}
}

// TestIDMinLengthRunsAfterInvalidType: an id is z.string().min(1), and zod
// runs the min-length check even after the invalid_type whenever the value
// is not null and has a length (its check's when): an array, so only the
// empty one fails it (origin "array"), or an object with an own length
// property that JavaScript's length >= 1 finds false (origin "unknown",
// "to be >=1"): 0, null, false, NaN-ish strings, arrays that do not join to
// a number >= 1, objects. Numbers, booleans and null get no min issue.
func TestIDMinLengthRunsAfterInvalidType(t *testing.T) {
	requireZodIssues(t, []zodCase{
		{"subagent.list", `{"parentSessionId":[]}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received array"},{"origin":"array","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected array to have >=1 items"}]`},
		{"subagent.list", `{"parentSessionId":[1]}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received array"}]`},
		{"subagent.list", `{"parentSessionId":[[]]}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received array"}]`},
		{"subagent.list", `{"parentSessionId":{}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":0}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":1}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":-1e400}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":1e400}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":0.5}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":null}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":true}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":false}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":{}}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"1"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":""}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":" \u00a0\ufeff\u2028\u3000 2\t"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"\u200b1"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"0x1"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"0b0"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"-0x1"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"Infinity"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"-Infinity"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"infinity"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"1_0"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"1."}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":".5e1"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":"1e"}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":[]}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":[[" 3"]]}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"length":[null]}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":[1,2]}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":[{}]}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.list", `{"parentSessionId":{"length":0,"length":3}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":{"Length":0}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received object"}]`},
		{"subagent.list", `{"parentSessionId":null}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received null"}]`},
		{"subagent.list", `{"parentSessionId":0}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received number"}]`},
		{"subagent.list", `{"parentSessionId":true}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received boolean"}]`},
		{"subagent.list", `{"parentSessionId":""}`,
			`[{"origin":"string","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected string to have >=1 characters"}]`},
		{"subagent.history", `{"parentSessionId":[],"childSessionId":{"length":0}}`,
			`[{"expected":"string","code":"invalid_type","path":["parentSessionId"],"message":"Invalid input: expected string, received array"},{"origin":"array","code":"too_small","minimum":1,"inclusive":true,"path":["parentSessionId"],"message":"Too small: expected array to have >=1 items"},{"expected":"string","code":"invalid_type","path":["childSessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["childSessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"subagent.prompt", `{"parentSessionId":"p","childSessionId":[],"content":[]}`,
			`[{"expected":"string","code":"invalid_type","path":["childSessionId"],"message":"Invalid input: expected string, received array"},{"origin":"array","code":"too_small","minimum":1,"inclusive":true,"path":["childSessionId"],"message":"Too small: expected array to have >=1 items"}]`},
		{"session.history", `{"sessionId":{"length":"0"}}`,
			`[{"expected":"string","code":"invalid_type","path":["sessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["sessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"session.prompt", `{"sessionId":[],"mode":"queue","content":[]}`,
			`[{"expected":"string","code":"invalid_type","path":["sessionId"],"message":"Invalid input: expected string, received array"},{"origin":"array","code":"too_small","minimum":1,"inclusive":true,"path":["sessionId"],"message":"Too small: expected array to have >=1 items"}]`},
		{"session.create", `{"workspaceId":[],"cwd":[],"sessionId":{"length":0}}`,
			`[{"expected":"string","code":"invalid_type","path":["workspaceId"],"message":"Invalid input: expected string, received array"},{"origin":"array","code":"too_small","minimum":1,"inclusive":true,"path":["workspaceId"],"message":"Too small: expected array to have >=1 items"},{"expected":"string","code":"invalid_type","path":["cwd"],"message":"Invalid input: expected string, received array"},{"expected":"string","code":"invalid_type","path":["sessionId"],"message":"Invalid input: expected string, received object"},{"origin":"unknown","code":"too_small","minimum":1,"inclusive":true,"path":["sessionId"],"message":"Too small: expected unknown to be >=1"}]`},
		{"session.create", `{"sessionId":"","workspaceId":"a","cwd":"x"}`,
			`[{"origin":"string","code":"too_small","minimum":1,"inclusive":true,"path":["sessionId"],"message":"Too small: expected string to have >=1 characters"},{"code":"custom","path":[],"message":"session.create accepts workspaceId or cwd, not both"}]`},
		{"session.list", `{"cursor":[]}`,
			`[{"expected":"string","code":"invalid_type","path":["cursor"],"message":"Invalid input: expected string, received array"}]`},
		{"subagent.prompt", `{"parentSessionId":"p","childSessionId":"c","content":[{"type":[]},{"type":{"length":0}}]}`,
			`[{"expected":"string","code":"invalid_type","path":["content",0,"type"],"message":"Invalid input: expected string, received array"},{"expected":"string","code":"invalid_type","path":["content",1,"type"],"message":"Invalid input: expected string, received object"}]`},
		{"session.history", `{"sessionId":"s","maxMessages":1.7976931348623158e308}`,
			`[{"code":"too_big","maximum":9007199254740991,"note":"Integers must be within the safe integer range.","origin":"int","inclusive":true,"path":["maxMessages"],"message":"Too big: expected int to be <=9007199254740991"}]`},
		{"session.history", `{"sessionId":"s","maxMessages":-1e-400}`,
			`[{"origin":"number","code":"too_small","minimum":0,"inclusive":false,"path":["maxMessages"],"message":"Too small: expected number to be >0"}]`},
		{"session.history", `{"sessionId":"s","beforeSeq":-9007199254740993}`,
			`[{"code":"too_small","minimum":-9007199254740991,"note":"Integers must be within the safe integer range.","origin":"int","inclusive":true,"path":["beforeSeq"],"message":"Too small: expected int to be >=-9007199254740991"},{"origin":"number","code":"too_small","minimum":0,"inclusive":true,"path":["beforeSeq"],"message":"Too small: expected number to be >=0"}]`},
	})
}

// TestInfiniteNumberIsReceivedInfinity: a number JSON.parse overflows to
// +-Infinity fails z.number() with received "Infinity" (for -Infinity too),
// a key zod places between code and path.
func TestInfiniteNumberIsReceivedInfinity(t *testing.T) {
	requireZodIssues(t, []zodCase{
		{"subagent.history", `{"parentSessionId":"p","childSessionId":"c","maxMessages":1e400}`,
			`[{"expected":"number","code":"invalid_type","received":"Infinity","path":["maxMessages"],"message":"Invalid input: expected number, received number"}]`},
		{"subagent.history", `{"parentSessionId":"p","childSessionId":"c","beforeSeq":-1e400}`,
			`[{"expected":"number","code":"invalid_type","received":"Infinity","path":["beforeSeq"],"message":"Invalid input: expected number, received number"}]`},
		{"session.history", `{"sessionId":"s","beforeSeq":1E+400,"maxMessages":-1e309}`,
			`[{"expected":"number","code":"invalid_type","received":"Infinity","path":["beforeSeq"],"message":"Invalid input: expected number, received number"},{"expected":"number","code":"invalid_type","received":"Infinity","path":["maxMessages"],"message":"Invalid input: expected number, received number"}]`},
		{"session.history", `{"sessionId":"s","maxMessages":1` + strings.Repeat("0", 400) + `}`,
			`[{"expected":"number","code":"invalid_type","received":"Infinity","path":["maxMessages"],"message":"Invalid input: expected number, received number"}]`},
		{"session.history", `{"sessionId":"s","maxMessages":1.7976931348623159e308}`,
			`[{"expected":"number","code":"invalid_type","received":"Infinity","path":["maxMessages"],"message":"Invalid input: expected number, received number"}]`},
	})
}
