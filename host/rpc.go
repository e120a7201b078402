package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// invalidRequestID is the rpcId echoed when the body's own rpcId is not a string.
const invalidRequestID = "invalid-request"

// call is one decoded client-request.
type call struct {
	rpcID   string
	method  string
	payload json.RawMessage
}

// method implements one RPC: it validates the payload and returns the ok
// value or a typed business error.
type method func(ctx context.Context, c call) (any, *rpcError)

type serverResponse struct {
	Type   string         `json:"type"`
	RPCID  string         `json:"rpcId"`
	Result responseResult `json:"result"`
}

type responseResult struct {
	OK    bool       `json:"ok"`
	Value any        `json:"value,omitempty"`
	Error *wireError `json:"error,omitempty"`
}

type wireError struct {
	Code    fault.Code `json:"code"`
	Message string     `json:"message"`
	Details any        `json:"details"`
}

// serveRPC answers POST /api/<name>: carrier checks first (HTTP status) in
// the original's order — a non-POST is 404, then the media type 415, then
// the body 413/408/400, then /api/respond's receipt, and only then an unknown
// method 404 — then the two-level parse and the method itself (always
// HTTP 200).
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, name string) {
	if r.Method != http.MethodPost {
		carrierError(w, http.StatusNotFound, "not found")
		return
	}
	if !isJSONMediaType(r.Header.Get("Content-Type")) {
		carrierError(w, http.StatusUnsupportedMediaType, "content type must be application/json")
		return
	}
	body, charged, status, text := h.readBody(w, r)
	defer h.bodies.give(charged)
	if status != 0 {
		carrierError(w, status, text)
		return
	}
	if name == "respond" { // before the method lookup, as in the original
		writeReceipt(w, body)
		return
	}
	m, ok := h.methods[name]
	if !ok {
		carrierError(w, http.StatusNotFound, "not found")
		return
	}
	c, bad := decodeEnvelope(body, name)
	if bad != nil {
		writeResponse(w, c.rpcID, nil, bad)
		return
	}
	value, failure, panicked := invoke(r.Context(), m, c)
	if panicked != "" {
		carrierError(w, http.StatusInternalServerError, "handler failure: "+panicked)
		return
	}
	writeResponse(w, c.rpcID, value, failure)
}

// invoke runs m, turning a panic into the text of a 500.
func invoke(ctx context.Context, m method, c call) (value any, failure *rpcError, panicked string) {
	defer func() {
		if p := recover(); p != nil {
			panicked = fmt.Sprint(p)
		}
	}()
	value, failure = m(ctx, c)
	return value, failure, ""
}

func isJSONMediaType(header string) bool {
	mediaType, _, _ := strings.Cut(header, ";")
	return strings.ToLower(strings.TrimSpace(mediaType)) == "application/json"
}

// decodeEnvelope applies the first level of validation: the client-request
// shape ({type: "client-request", rpcId: string, method: string, payload:
// any value}, issues in that key order), then method == path. The returned call always carries the rpcId to echo.
func decodeEnvelope(body []byte, path string) (call, *rpcError) {
	var fields map[string]json.RawMessage
	if !isJSONObject(body) || json.Unmarshal(body, &fields) != nil || fields == nil {
		return call{rpcID: invalidRequestID}, badRequest("invalid client-request message",
			[]payloadIssue{wrongType(nil, "object", body, true)})
	}
	c := call{rpcID: invalidRequestID, payload: fields["payload"]}
	var issues []payloadIssue
	var typ string
	if raw, ok := fields["type"]; !ok || !isJSONString(raw) || json.Unmarshal(raw, &typ) != nil || typ != "client-request" {
		issues = append(issues, payloadIssue{Code: issueInvalidValue, Path: []any{"type"}, Message: `expected "client-request"`})
	}
	if raw, ok := fields["rpcId"]; !ok || !isJSONString(raw) || json.Unmarshal(raw, &c.rpcID) != nil {
		c.rpcID = invalidRequestID
		issues = append(issues, wrongType([]any{"rpcId"}, "string", raw, ok))
	}
	if raw, ok := fields["method"]; !ok || !isJSONString(raw) || json.Unmarshal(raw, &c.method) != nil {
		issues = append(issues, wrongType([]any{"method"}, "string", raw, ok))
	}
	if _, ok := fields["payload"]; !ok {
		issues = append(issues, payloadIssue{Code: issueInvalidType, Path: []any{"payload"}, Message: "required value is missing"})
	}
	if len(issues) > 0 {
		return c, badRequest("invalid client-request message", issues)
	}
	if c.method != path {
		return c, badRequest("method "+quote(c.method)+" does not match path "+quote(path), nil)
	}
	return c, nil
}

// invalidPayload is the second-level validation failure, or nil.
func invalidPayload(c call, p *payload) *rpcError {
	if len(p.issues) == 0 {
		return nil
	}
	return badRequest("invalid payload for "+c.method, p.issues)
}

// preEncoded is an ok value that is, piece after piece, its own JSON text,
// exactly as jsjson.Marshal would encode the value it stands for.
type preEncoded interface {
	appendPieces(dst [][]byte) [][]byte
}

func writeResponse(w http.ResponseWriter, rpcID string, value any, failure *rpcError) {
	if v, ok := value.(preEncoded); ok && failure == nil {
		writeEncoded(w, rpcID, v)
		return
	}
	resp := serverResponse{Type: "server-response", RPCID: rpcID, Result: responseResult{OK: failure == nil, Value: value}}
	if failure != nil {
		details := failure.Details
		if details == nil {
			details = struct{}{}
		}
		resp.Result.Error = &wireError{Code: failure.Code, Message: failure.Message, Details: details}
	}
	body, err := jsjson.Marshal(resp) // as Response.json: JSON.stringify's bytes, no newline
	if err != nil {
		carrierError(w, http.StatusInternalServerError, "handler failure: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json") // Response.json's one header
	_, _ = w.Write(body)
}

// writeEncoded writes the ok server-response of value in serverResponse's
// key order: the envelope's bytes around value's own, which are written as
// they are (never copied).
func writeEncoded(w http.ResponseWriter, rpcID string, value preEncoded) {
	id, err := jsjson.Marshal(rpcID)
	if err != nil {
		carrierError(w, http.StatusInternalServerError, "handler failure: "+err.Error())
		return
	}
	head := append(append([]byte(`{"type":"server-response","rpcId":`), id...), `,"result":{"ok":true,"value":`...)
	w.Header().Set("Content-Type", "application/json")
	for _, piece := range value.appendPieces([][]byte{head}) {
		if _, err := w.Write(piece); err != nil {
			return
		}
	}
	_, _ = io.WriteString(w, "}}")
}

// writeReceipt answers POST /api/respond, the carrier of a client-response
// to a server-initiated request (approvals, questions), with the
// original's RpcReceipt. This runtime never issues server-initiated
// requests, so nothing is ever pending: a valid client-response is
// not-pending, anything else bad-response (both HTTP 200, as Response.json).
func writeReceipt(w http.ResponseWriter, body []byte) {
	reason := "bad-response"
	if isClientResponse(body) {
		reason = "not-pending"
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"accepted":false,"reason":"`+reason+`"}`)
}

// isClientResponse reports whether body passes the original's
// clientResponseSchema: a (non-strict) object {type: "client-response",
// rpcId: string, result: {ok: true, value: unknown (present)} |
// {ok: false, error: RpcError}}.
func isClientResponse(body []byte) bool {
	fields, ok := jsonFields(body)
	return ok && isLiteral(fields["type"], "client-response") && isJSONString(fields["rpcId"]) &&
		isRPCResult(fields["result"])
}

func isRPCResult(raw json.RawMessage) bool {
	fields, ok := jsonFields(raw)
	if !ok {
		return false
	}
	switch string(bytes.TrimSpace(fields["ok"])) {
	case "true":
		_, hasValue := fields["value"]
		return hasValue
	case "false":
		return isRPCError(fields["error"])
	}
	return false
}

// rpcErrorShapes is the original's rpcErrorSchema (seed revision): the
// details fields each code requires, by kind.
var rpcErrorShapes = map[string]map[string]string{
	"bad-request":                  {"issues": "array"},
	"cancelled":                    {},
	"session-not-found":            {"sessionId": "string"},
	"model-unavailable":            {"provider": "string", "model": "string"},
	"session-conflict":             {"sessionId": "string", "requestedCwd": "string", "existingCwd": "string?"},
	"workspace-attach-failed":      {"sessionId": "string", "workspaceId": "string"},
	"workspace-not-found":          {"workspaceId": "string"},
	"workspace-invalid-path":       {"path": "string"},
	"workspace-name-conflict":      {"name": "string"},
	"workspace-move-invalid":       {"workspaceId": "string", "sessionId": "string", "beforeSessionId": "string?"},
	"directory-unreadable":         {"path": "string"},
	"directory-exists":             {"path": "string"},
	"directory-create-failed":      {"path": "string"},
	"directory-picker-unavailable": {"capability": "string"},
	"agent-busy":                   {"reason": "string"},
	"queue-item-not-found":         {"itemId": "string"},
	"command-error":                {},
	"unknown-command":              {},
	"settings-rejected":            {"ns": "string"},
	"settings-not-exposed":         {"ns": "string"},
	"settings-conflict":            {"ns": "string", "expected": "number", "actual": "number"},
	"credential-rejected":          {"ref": "string"},
	"title-invalid":                {"sessionId": "string"},
	"fork-unavailable":             {"sessionId": "string"},
	"subagent-parent-unavailable":  {"parentSessionId": "string"},
	"subagent-not-found":           {"parentSessionId": "string", "childSessionId": "string"},
	"subagent-catalog-diagnostic":  {"parentSessionId": "string", "childSessionId": "string", "reason": "diagnostic"},
	"subagent-not-resumable":       {"childSessionId": "string"},
	"subagent-unauthorized":        {"childSessionId": "string"},
	"subagent-not-delivered":       {"childSessionId": "string"},
	"internal":                     {},
}

func isRPCError(raw json.RawMessage) bool {
	fields, ok := jsonFields(raw)
	if !ok {
		return false
	}
	var code string
	if !isJSONString(fields["code"]) || json.Unmarshal(fields["code"], &code) != nil {
		return false
	}
	shape, known := rpcErrorShapes[code]
	if !known || !isJSONString(fields["message"]) {
		return false
	}
	details, ok := jsonFields(fields["details"])
	if !ok {
		return false
	}
	for name, kind := range shape {
		v, present := details[name]
		switch kind {
		case "string?":
			ok = !present || isJSONString(v)
		case "string":
			ok = isJSONString(v)
		case "array":
			ok = isJSONArray(v)
		case "number": // z.number(): finite, so not a literal JSON.parse overflows
			f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
			ok = isJSONNumber(v) && (err == nil || !math.IsInf(f, 0))
		case "diagnostic":
			ok = isLiteral(v, "corrupt") || isLiteral(v, "unsupported") || isLiteral(v, "unavailable")
		}
		if !ok {
			return false
		}
	}
	return true
}

// jsonFields decodes a JSON object (duplicate keys: the last wins, as
// JSON.parse); ok is false for any other JSON value.
func jsonFields(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if !isJSONObject(raw) || json.Unmarshal(raw, &fields) != nil {
		return nil, false
	}
	return fields, true
}

// isLiteral reports whether raw is the JSON string want.
func isLiteral(raw json.RawMessage, want string) bool {
	var got string
	return isJSONString(raw) && json.Unmarshal(raw, &got) == nil && got == want
}

func isJSONNumber(v json.RawMessage) bool {
	c := firstByte(v)
	return c == '-' || (c >= '0' && c <= '9')
}

// carrierError answers a transport-level failure as plain text, with the
// one header the original's new Response(text) has.
func carrierError(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}
