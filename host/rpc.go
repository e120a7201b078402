package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dsh-actors/dsh-actors/session"
)

// invalidRequestID is the rpcId echoed when the body's own rpcId is not a string.
const invalidRequestID = "invalid-request"

// maxBodyBytes bounds a request body; a larger body is a 413. The original
// reads the whole body with no limit, so the bound is far above realistic
// payloads (padded envelopes, base64 images) and only guards the memory.
const maxBodyBytes = 64 << 20

// call is one decoded client-request.
type call struct {
	rpcID   string
	method  string
	payload json.RawMessage
}

// method implements one RPC: it validates the payload and returns the ok
// value or a typed business error.
type method func(ctx context.Context, c call) (any, *Error)

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
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details"`
}

// serveRPC answers POST /api/<name>: carrier checks first (HTTP status) in
// the original's order — a non-POST is 404, then
// the media type 415, then the body 400, and only then an unknown method
// 404 — then the two-level parse and the method itself (always HTTP 200).
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, name string) {
	if r.Method != http.MethodPost {
		carrierError(w, http.StatusNotFound, "not found")
		return
	}
	if !isJSONMediaType(r.Header.Get("Content-Type")) {
		carrierError(w, http.StatusUnsupportedMediaType, "content type must be application/json")
		return
	}
	body, status, text := readBody(w, r)
	if status != 0 {
		carrierError(w, status, text)
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
func invoke(ctx context.Context, m method, c call) (value any, failure *Error, panicked string) {
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

// readBody returns the body, or a carrier status and text when it is too
// large or not JSON. As the original's req.json() — undici's
// utf8DecodeBytes drops a leading UTF-8 BOM and its default TextDecoder one
// more, then JSON.parse — up to two leading BOMs are dropped.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, http.StatusRequestEntityTooLarge, "request body too large"
	}
	bom := []byte("\uFEFF")
	body = bytes.TrimPrefix(bytes.TrimPrefix(body, bom), bom)
	if err != nil || !json.Valid(body) {
		return nil, http.StatusBadRequest, "body is not JSON"
	}
	return body, 0, ""
}

// decodeEnvelope applies the first level of validation: the client-request
// shape (z.object({type: z.literal("client-request"), rpcId: z.string(),
// method: z.string(), payload: z.unknown()}), issues in that key order),
// then method == path. The returned call always carries the rpcId to echo.
func decodeEnvelope(body []byte, path string) (call, *Error) {
	var fields map[string]json.RawMessage
	if !isJSONObject(body) || json.Unmarshal(body, &fields) != nil || fields == nil {
		return call{rpcID: invalidRequestID}, badRequest("invalid client-request message",
			[]Issue{invalidType(nil, "object", body, true)})
	}
	c := call{rpcID: invalidRequestID, payload: fields["payload"]}
	var issues []Issue
	var typ string
	if raw, ok := fields["type"]; !ok || !isJSONString(raw) || json.Unmarshal(raw, &typ) != nil || typ != "client-request" {
		issues = append(issues, Issue{Code: "invalid_value", Values: []any{"client-request"}, Path: []any{"type"},
			Message: `Invalid input: expected "client-request"`})
	}
	if raw, ok := fields["rpcId"]; !ok || !isJSONString(raw) || json.Unmarshal(raw, &c.rpcID) != nil {
		c.rpcID = invalidRequestID
		issues = append(issues, invalidType([]any{"rpcId"}, "string", raw, ok))
	}
	if raw, ok := fields["method"]; !ok || !isJSONString(raw) || json.Unmarshal(raw, &c.method) != nil {
		issues = append(issues, invalidType([]any{"method"}, "string", raw, ok))
	}
	if _, ok := fields["payload"]; !ok {
		issues = append(issues, Issue{Code: "invalid_type", Expected: "nonoptional", Path: []any{"payload"},
			Message: "Invalid input: expected nonoptional, received undefined"})
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
func invalidPayload(c call, p *payload) *Error {
	if len(p.issues) == 0 {
		return nil
	}
	return badRequest("invalid payload for "+c.method, p.issues)
}

func writeResponse(w http.ResponseWriter, rpcID string, value any, failure *Error) {
	resp := serverResponse{Type: "server-response", RPCID: rpcID, Result: responseResult{OK: failure == nil, Value: value}}
	if failure != nil {
		details := failure.Details
		if details == nil {
			details = struct{}{}
		}
		resp.Result.Error = &wireError{Code: failure.Code, Message: failure.Message, Details: details}
	}
	body, err := session.EncodeData(resp) // as Response.json: JSON.stringify's bytes, no newline
	if err != nil {
		carrierError(w, http.StatusInternalServerError, "handler failure: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json") // Response.json's one header
	_, _ = w.Write(body)
}

// carrierError answers a transport-level failure as plain text, with the
// one header the original's new Response(text) has.
func carrierError(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}
