// Package llm is the model client: OpenAI-compatible streaming chat
// completions (DeepSeek's API by default) translated into the harness's
// provider-neutral chunk stream, with typed failures.
//
// # The stream
//
// Client.Stream sends one Request and yields Chunks as they arrive: for
// every content block (text, reasoning, one per tool call) a block-start and
// its deltas (tool-call arguments may be split across many), then, once the
// server sent [DONE], every block-end in opening order, the usage chunk when
// the server reported usage, and a finish chunk. Chunks are meant to be
// logged verbatim: their JSON is the original harness's. A failure either
// ends the stream with an error (an *Error, with a Code such as AUTH,
// RATE_LIMIT, SERVER, TIMEOUT, TRANSPORT, STREAM_CLOSED or
// MALFORMED_RESPONSE) or arrives in-band as a finish chunk whose reason is
// {kind:"error", failure} (EMPTY_RESPONSE, CONTENT_FILTER, ...); consumers
// handle both. An Assembler folds a chunk stream into the assistant's
// content blocks, usage and finish reason.
//
// # Retries
//
// The client never retries: the model agent's retry policy says whether a
// failed model call is retried, as which retry and after what delay, and
// the agent loop logs each decision as an llm/retry event before it waits.
//
// # Choice of transport
//
// The client is the standard library's net/http and a small SSE reader,
// not an SDK: the harness needs the wire facts an SDK hides (a stream that
// ends without [DONE] is a failure, every retry must be the loop's own, the
// request body's key order and absent-not-null fields) and the whole
// protocol is a few hundred lines.
package llm
