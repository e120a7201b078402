// Package llmtest holds the module's doubles of the model: a scripted
// llm.Client whose Steps answer with the chunks a Response streams (or a
// failure, or a hang), and Server, a chat-completions server on loopback
// with the fine-grained plumbing the module's own tests script with
// (Behavior, Route, Push, Usage, finish reasons). Tests import it, and so
// does modelagent/modelagenttest, the embedders' mock model, which is a
// small surface over Server.
package llmtest

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Chunks returns the chunks the model client reads from r's stream.
func Chunks(r Response) []vocab.Chunk {
	var body bytes.Buffer
	for _, payload := range r.Events() {
		body.WriteString("data: " + payload + "\n\n")
	}
	var chunks []vocab.Chunk
	for c, err := range llm.ReadStream(&body) {
		if err != nil {
			panic("llmtest: a scripted response does not read back: " + err.Error())
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// DeepSeekOn returns a DeepSeek client of srv with the key "test-key", no
// request defaults and the given idle timeout (0: the default).
func DeepSeekOn(srv *Server, idle time.Duration) *llm.DeepSeek {
	c, err := llm.NewDeepSeek(llm.Config{BaseURL: srv.URL, APIKey: "test-key", IdleTimeout: idle})
	if err != nil {
		panic(err) // a key is set: cannot fail
	}
	return c
}

// Step is one scripted model call: given the call's context and request,
// the stream it answers with.
type Step func(ctx context.Context, req llm.Request) iter.Seq2[vocab.Chunk, error]

// Reply answers with r's stream.
func Reply(r Response) Step { return chunks(Chunks(r)...) }

// chunks answers with exactly these chunks.
func chunks(script ...vocab.Chunk) Step {
	return func(context.Context, llm.Request) iter.Seq2[vocab.Chunk, error] {
		return func(yield func(vocab.Chunk, error) bool) {
			for _, c := range script {
				if !yield(c, nil) {
					return
				}
			}
		}
	}
}

// Fail answers with the chunks and then err.
func Fail(err error, before ...vocab.Chunk) Step {
	return func(ctx context.Context, req llm.Request) iter.Seq2[vocab.Chunk, error] {
		return func(yield func(vocab.Chunk, error) bool) {
			for c, e := range chunks(before...)(ctx, req) {
				if !yield(c, e) {
					return
				}
			}
			yield(vocab.Chunk{}, err)
		}
	}
}

// Hang starts a text block with the delta "partial" and then waits until
// the call is cancelled, ending with an ABORTED error.
func Hang() Step {
	return func(ctx context.Context, _ llm.Request) iter.Seq2[vocab.Chunk, error] {
		return func(yield func(vocab.Chunk, error) bool) {
			if !yield(vocab.Chunk{Type: vocab.ChunkBlockStart, BlockType: event.BlockText}, nil) ||
				!yield(vocab.Chunk{Type: vocab.ChunkTextDelta, Text: "partial"}, nil) {
				return
			}
			<-ctx.Done()
			yield(vocab.Chunk{}, &llm.Error{Failure: vocab.Failure{Message: "request aborted by caller", Code: llm.CodeAborted}, Cause: ctx.Err()})
		}
	}
}

// ErrExhausted is the error of a call after the script ran out.
var ErrExhausted = errors.New("llmtest: script exhausted")

// Client is a scripted llm.Client: each call takes the next Step and
// records its request. It is safe for concurrent use; concurrent callers
// take steps in the order their calls arrive.
type Client struct {
	mu       sync.Mutex
	steps    []Step
	requests []llm.Request
}

// NewClient returns a client that answers with steps, in order.
func NewClient(steps ...Step) *Client { return &Client{steps: steps} }

// Push appends steps to the script.
func (c *Client) Push(steps ...Step) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps = append(c.steps, steps...)
}

// Stream records req and answers with the next step; once the script is
// exhausted it fails with ErrExhausted.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[vocab.Chunk, error] {
	c.mu.Lock()
	c.requests = append(c.requests, req)
	var step Step
	if len(c.steps) > 0 {
		step, c.steps = c.steps[0], c.steps[1:]
	}
	c.mu.Unlock()
	if step == nil {
		return Fail(ErrExhausted)(ctx, req)
	}
	return step(ctx, req)
}

// Requests returns the requests received so far, in order.
func (c *Client) Requests() []llm.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests)
}

// Remaining is the number of steps not yet used.
func (c *Client) Remaining() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.steps)
}
