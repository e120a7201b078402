package llm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
)

// textDeltaStream is a stream of n text-delta events as a chat-completions
// server sends them, then a finish, a usage chunk and [DONE].
func textDeltaStream(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n")
	for range n {
		b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"word "}}]}` + "\n\n")
	}
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkReadStream measures translating one 100-delta stream in memory
// (SSE framing and chunk decoding, no network), per stream.
func BenchmarkReadStream(b *testing.B) {
	stream := textDeltaStream(100)
	b.ReportAllocs()
	for b.Loop() {
		chunks := 0
		for _, err := range ReadStream(bytes.NewReader(stream)) {
			if err != nil {
				b.Fatal(err)
			}
			chunks++
		}
		if chunks != 104 {
			b.Fatalf("%d chunks, want 104", chunks)
		}
	}
}

// BenchmarkMarshalRequest measures encoding a request of a 40-message
// conversation with tools.
func BenchmarkMarshalRequest(b *testing.B) {
	req := benchRequest(20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := marshalRequest(req, ProfileDeepSeek); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRequest(turns int) Request {
	req := Request{Model: "m", System: strings.Repeat("system ", 40), ReasoningEffort: EffortHigh, MaxTokens: 1000}
	for range turns {
		req.Messages = append(req.Messages,
			Message{Role: "user", Content: event.Text("question")},
			Message{Role: "assistant", Content: event.Text(strings.Repeat("word ", 100))})
	}
	return req
}
