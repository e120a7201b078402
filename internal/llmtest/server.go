package llmtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
)

// Behavior answers one chat-completions request.
type Behavior func(w http.ResponseWriter, r *http.Request)

// Stream answers 200 with r's stream.
func Stream(r Response) Behavior { return events(r.Events()...) }

// events answers 200 with these data payloads, each flushed as its own
// event.
func events(payloads ...string) Behavior {
	return func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		for _, p := range payloads {
			if !send(w, p) {
				return
			}
		}
	}
}

// Status answers with the status, the headers and body (JSON text) as the
// error body, e.g. {"error":{"message":"..."}}.
func Status(status int, body string, headers ...string) Behavior {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// RateLimited answers 429 with a Retry-After of seconds.
func RateLimited(seconds int) Behavior {
	return Status(http.StatusTooManyRequests, `{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}`,
		"Retry-After", strconv.Itoa(seconds), "X-Request-Id", "req-429")
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// send writes one event and flushes it; false when the write failed.
func send(w http.ResponseWriter, payload string) bool {
	if _, err := w.Write(sse(payload)); err != nil {
		return false
	}
	http.NewResponseController(w).Flush()
	return true
}

// Received is one request the server got.
type Received struct {
	Path   string
	Header http.Header
	Body   []byte
}

// Server is an OpenAI-compatible chat-completions server on loopback: each
// POST to /chat/completions or /v1/chat/completions takes the next
// Behavior and is recorded; once the script is exhausted it answers 500.
// Close it when done.
type Server struct {
	*httptest.Server
	mu        sync.Mutex
	behaviors []Behavior
	routes    []route
	received  []Received
}

// route is a script for the requests match selects.
type route struct {
	match     func(Received) bool
	behaviors []Behavior
}

// Route answers the requests match selects with behaviors, in order,
// before the main script is consulted (routes are tried in the order they
// were added; an exhausted route answers 500). Use it to script agents
// whose calls interleave, e.g. by matching their prompts.
func (s *Server) Route(match func(Received) bool, behaviors ...Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes = append(s.routes, route{match: match, behaviors: behaviors})
}

// NewServer starts a server answering with behaviors, in order.
func NewServer(behaviors ...Behavior) *Server {
	s := &Server{behaviors: behaviors}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /chat/completions", s.serve)
	mux.HandleFunc("POST /v1/chat/completions", s.serve)
	s.Server = httptest.NewServer(mux)
	return s
}

// Push appends behaviors to the script.
func (s *Server) Push(behaviors ...Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviors = append(s.behaviors, behaviors...)
}

// Received returns the requests so far, in arrival order.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

// Last returns the latest request the server got (zero before any).
func (s *Server) Last() Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.received) == 0 {
		return Received{}
	}
	return s.received[len(s.received)-1]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	got := Received{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.received = append(s.received, got)
	b := s.next(got)
	s.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body)) // the behavior may read it again
	if b == nil {
		Status(http.StatusInternalServerError, `{"error":{"message":"llmtest: script exhausted"}}`)(w, r)
		return
	}
	b(w, r)
}

// next takes the behavior for got: its route's next, else the script's.
func (s *Server) next(got Received) Behavior {
	queue := &s.behaviors
	for i := range s.routes {
		if s.routes[i].match(got) {
			queue = &s.routes[i].behaviors
			break
		}
	}
	if len(*queue) == 0 {
		return nil
	}
	b := (*queue)[0]
	*queue = (*queue)[1:]
	return b
}
