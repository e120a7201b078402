package llmtest

import (
	"bytes"
	"encoding/json"
)

// Call is one tool call a scripted model makes; Args are the fragments its
// JSON arguments arrive in (an empty ID sends none).
type Call struct {
	ID   string
	Name string
	Args []string
}

// Usage is the wire usage a scripted response reports.
type Usage struct {
	Prompt, Completion, CacheHit, Reasoning int64
}

// Response describes one scripted model response as a chat-completions
// stream sends it: reasoning deltas, then text deltas, then the tool calls
// (each call's first part carries its id and name), the finish reason and
// a trailing usage chunk.
type Response struct {
	Reasoning []string
	Text      []string
	Calls     []Call
	// Finish is the wire finish_reason; "" means "tool_calls" when there are
	// calls and "stop" otherwise; "none" sends no finish_reason.
	Finish string
	// Usage, when set, is sent in a usage-only chunk before [DONE].
	Usage *Usage
}

// Say is a response whose text arrives in the given deltas.
func Say(text ...string) Response {
	return Response{Text: text, Usage: &Usage{Prompt: 10, Completion: 2}}
}

// CallTools is a response that calls the given tools.
func CallTools(calls ...Call) Response {
	return Response{Calls: calls, Usage: &Usage{Prompt: 10, Completion: 5}}
}

// Events returns the data payloads of the stream, [DONE] last.
func (r Response) Events() []string {
	events := []string{chunk(delta{"role": "assistant", "content": ""}, nil)}
	for _, text := range r.Reasoning {
		events = append(events, chunk(delta{"reasoning_content": text}, nil))
	}
	for _, text := range r.Text {
		events = append(events, chunk(delta{"content": text}, nil))
	}
	for i, call := range r.Calls {
		events = append(events, callEvents(i, call)...)
	}
	if finish := r.finish(); finish != "none" {
		events = append(events, chunk(delta{}, &finish))
	}
	if u := r.Usage; u != nil {
		events = append(events, usageEvent(*u))
	}
	return append(events, "[DONE]")
}

func (r Response) finish() string {
	switch {
	case r.Finish != "":
		return r.Finish
	case len(r.Calls) > 0:
		return "tool_calls"
	}
	return "stop"
}

// sse frames data payloads as server-sent events.
func sse(payloads ...string) []byte {
	var b bytes.Buffer
	for _, p := range payloads {
		b.WriteString("data: ")
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

type delta map[string]any

// callEvents are one call's parts: the first with id, type and name, the
// others only argument fragments.
func callEvents(index int, call Call) []string {
	args := call.Args
	if len(args) == 0 {
		args = []string{""}
	}
	var events []string
	for k, fragment := range args {
		part := map[string]any{"index": index, "function": map[string]any{"arguments": fragment}}
		if k == 0 {
			if call.ID != "" {
				part["id"] = call.ID
			}
			part["type"] = "function"
			part["function"] = map[string]any{"name": call.Name, "arguments": fragment}
		}
		events = append(events, chunk(delta{"tool_calls": []any{part}}, nil))
	}
	return events
}

// chunk is one chat.completion.chunk with a single choice.
func chunk(d delta, finish *string) string {
	choice := map[string]any{"index": 0, "delta": d}
	if finish != nil {
		choice["finish_reason"] = *finish
	}
	return encode(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk",
		"model": "test", "choices": []any{choice}})
}

func usageEvent(u Usage) string {
	usage := map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion,
		"total_tokens": u.Prompt + u.Completion}
	if u.CacheHit > 0 {
		usage["prompt_cache_hit_tokens"] = u.CacheHit
		usage["prompt_cache_miss_tokens"] = u.Prompt - u.CacheHit
	}
	if u.Reasoning > 0 {
		usage["completion_tokens_details"] = map[string]any{"reasoning_tokens": u.Reasoning}
	}
	return encode(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk",
		"choices": []any{}, "usage": usage})
}

func encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // maps of strings and numbers: cannot fail
	return string(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
}
