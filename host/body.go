package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// maxBodyBytes bounds a request body; a larger body is a 413. The original
// reads the whole body with no limit, so the bound is far above realistic
// payloads (padded envelopes, base64 images) and only guards the memory.
const maxBodyBytes = 64 << 20

// Defaults of the body limits in Options.
const (
	defaultBodyReadTimeout = 30 * time.Second
	// defaultBodyBytesInFlight holds two bodies of the largest size.
	defaultBodyBytesInFlight = 2 * (maxBodyBytes + 1)
)

// errBudgetSpent is a body read refused because the bodies in flight hold
// the whole budget.
var errBudgetSpent = errors.New("host: request bodies in flight hold the whole byte budget")

// bodyBudget is the bytes the request bodies being read or handled may hold
// together. A body is charged for the buffer it occupies as that buffer
// grows and refunded when its request has been answered.
type bodyBudget struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

// take charges n bytes, or reports false (charging nothing) when they do
// not fit.
func (b *bodyBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// give refunds n bytes charged by take.
func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// readAll reads body (whose declared length is declared, -1 when unknown)
// into one buffer charged to b: a declared length is charged and allocated
// at once, an unknown one as the buffer doubles. It returns the bytes and
// the charge the caller must give back (also on error); the buffer never
// grows beyond maxBodyBytes+1, enough for the caller's limit to show.
func (b *bodyBudget) readAll(body io.Reader, declared int64) ([]byte, int64, error) {
	var charged int64
	grow := func(size int64) error {
		size = min(size, maxBodyBytes+1)
		if !b.take(size - charged) {
			return errBudgetSpent
		}
		charged = size
		return nil
	}
	first := int64(512)
	if declared >= 0 {
		first = declared + 1 // room to read the end of the body
	}
	if err := grow(first); err != nil {
		return nil, charged, err
	}
	buf := make([]byte, 0, charged)
	for {
		if len(buf) == cap(buf) {
			if err := grow(2 * charged); err != nil {
				return nil, charged, err
			}
			buf = append(make([]byte, 0, charged), buf...)
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, charged, nil
		}
		if err != nil {
			return nil, charged, err
		}
	}
}

// readBody returns the body and its charge on h.bodies (to give back once
// the request is answered), or a carrier status and text when it is too
// large, does not fit the bodies in flight, takes longer than
// BodyReadTimeout, or is not JSON. As the original's req.json() — undici's
// utf8DecodeBytes drops a leading UTF-8 BOM and its default TextDecoder
// one more, then JSON.parse — up to two leading BOMs are dropped.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int64, int, string) {
	clearDeadline := h.bodyDeadline(w)
	body, charged, err := h.bodies.readAll(http.MaxBytesReader(w, r.Body, maxBodyBytes), r.ContentLength)
	if err != nil {
		// The rest of the body is not wanted: the server's discard of it
		// ends at the deadline, and the connection is not reused.
		w.Header().Set("Connection", "close")
	} else {
		clearDeadline()
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, charged, http.StatusRequestEntityTooLarge, "request body too large"
	case errors.Is(err, errBudgetSpent):
		return nil, charged, http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"request body too large: the bodies being read hold the server's whole %d-byte budget; retry later",
			h.bodies.limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, charged, http.StatusRequestTimeout, fmt.Sprintf("request body not read within %s", h.opts.BodyReadTimeout)
	}
	bom := []byte("\uFEFF")
	body = bytes.TrimPrefix(bytes.TrimPrefix(body, bom), bom)
	if err != nil || !json.Valid(body) {
		return nil, charged, http.StatusBadRequest, "body is not JSON"
	}
	return body, charged, 0, ""
}

// bodyDeadline sets the connection's read deadline to BodyReadTimeout from
// now and returns the function that clears it again once the body is read
// (so that the server's watch for the client going away, which cancels the
// request's context, and its wait for the next request are not cut short). A writer that cannot set deadlines (a recorder, a wrapper
// without Unwrap) reads without one.
func (h *Handler) bodyDeadline(w http.ResponseWriter) (clear func()) {
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(h.opts.BodyReadTimeout)) != nil {
		return func() {}
	}
	return func() { _ = rc.SetReadDeadline(time.Time{}) }
}
