package llm_test

import (
	"bytes"
	"net/http"

	"github.com/dsh-actors/dsh-actors/internal/llmtest"
)

// sse frames data payloads as server-sent events.
func sse(payloads ...string) []byte {
	var b bytes.Buffer
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.Bytes()
}

// streamBody is r's whole stream as a text/event-stream body.
func streamBody(r llmtest.Response) []byte { return sse(r.Events()...) }

// sendEvents answers 200 with these data payloads, each flushed as its own
// event, and stops at the first failed write.
func sendEvents(payloads ...string) llmtest.Behavior {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, p := range payloads {
			if _, err := w.Write(sse(p)); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
		}
	}
}

// truncate sends the first n events of r's stream and ends the response
// cleanly, without [DONE].
func truncate(r llmtest.Response, n int) llmtest.Behavior {
	return sendEvents(r.Events()[:n]...)
}

// disconnect sends the first n events of r's stream and then drops the
// connection mid-response.
func disconnect(r llmtest.Response, n int) llmtest.Behavior {
	return func(w http.ResponseWriter, req *http.Request) {
		sendEvents(r.Events()[:n]...)(w, req)
		panic(http.ErrAbortHandler)
	}
}

// stall sends the first n events of r's stream and then sends nothing
// until the client goes away.
func stall(r llmtest.Response, n int) llmtest.Behavior {
	return func(w http.ResponseWriter, req *http.Request) {
		sendEvents(r.Events()[:n]...)(w, req)
		<-req.Context().Done()
	}
}

// malformed sends one event whose payload is not JSON.
func malformed(payload string) llmtest.Behavior { return sendEvents(payload) }
