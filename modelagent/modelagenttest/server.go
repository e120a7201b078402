package modelagenttest

import (
	"net/http"
	"net/http/httptest"

	"github.com/dsh-actors/dsh-actors/internal/llmtest"
)

// Reply answers one chat-completions request. Say, CallTools and Status
// make the usual ones; any handler that writes a chat-completions stream
// or an error body will do.
type Reply func(w http.ResponseWriter, r *http.Request)

// Call is one tool call a scripted model makes: its id, the tool's name
// and the fragments its JSON arguments arrive in (an empty ID sends none).
type Call struct {
	ID   string
	Name string
	Args []string
}

// Say streams an assistant message whose text arrives in the given deltas,
// then finish_reason "stop" and a usage chunk.
func Say(text ...string) Reply { return Reply(llmtest.Stream(llmtest.Say(text...))) }

// CallTools streams the given tool calls in order, then finish_reason
// "tool_calls" and a usage chunk.
func CallTools(calls ...Call) Reply {
	wire := make([]llmtest.Call, len(calls))
	for i, c := range calls {
		wire[i] = llmtest.Call(c)
	}
	return Reply(llmtest.Stream(llmtest.CallTools(wire...)))
}

// Status answers with the status, the headers (name, value pairs) and
// body as the JSON error body, e.g. Status(401,
// `{"error":{"message":"Authentication Fails"}}`) or Status(429,
// `{"error":{"message":"Rate limit reached"}}`, "Retry-After", "0").
func Status(status int, body string, headers ...string) Reply {
	return Reply(llmtest.Status(status, body, headers...))
}

// Received is one request the server got: its headers (Authorization
// among them) and its JSON body.
type Received struct {
	Header http.Header
	Body   []byte
}

// Server is an OpenAI-compatible chat-completions server on loopback: each
// POST to /chat/completions or /v1/chat/completions is recorded and
// answered by the next Reply of the script; once the script is exhausted
// it answers 500. Requests are answered concurrently, taking replies in
// arrival order. Close it when done.
type Server struct {
	*httptest.Server
	srv *llmtest.Server
}

// NewServer starts a server answering with replies, in order.
func NewServer(replies ...Reply) *Server {
	behaviors := make([]llmtest.Behavior, len(replies))
	for i, r := range replies {
		behaviors[i] = llmtest.Behavior(r)
	}
	srv := llmtest.NewServer(behaviors...)
	return &Server{Server: srv.Server, srv: srv}
}

// Received returns the requests so far, in arrival order.
func (s *Server) Received() []Received {
	got := s.srv.Received()
	out := make([]Received, len(got))
	for i, r := range got {
		out[i] = Received{Header: r.Header, Body: r.Body}
	}
	return out
}
