// Package modelagent is the agent a language model drives: an
// agent.Factory whose agents run the tool loop over their own
// conversation, and the tool registry with the four model-facing subagent
// tools (subagent, subagent_fork, send_message, list_agents).
//
// # The loop
//
// A turn is a sequence of steps, one model call each: the step sends the
// conversation (the agent's surface, so a fork child sends its inherited
// turns and a resumed child its whole history) with the tools, logs
// request/header and request/context when they are new or changed, logs
// every streamed chunk as assistant/chunk, then the assistant message
// citing those chunks, then each tool call and its result. A step whose
// message called tools leads to another step; the turn ends when the model
// stops (completed), is cut at its token limit (max-tokens, its tool calls
// dropped), or is cancelled (aborted, or disposed under disposal; a call
// not yet started gets the "aborted before dispatch" result). A failed
// model call the retry policy retries ends its step, logs llm/retry, waits
// the delay (a cancel then ends the turn aborted, llm/retry kept) and ends
// the turn with {kind:"error", step, failure}; the runtime then opens a
// retry turn (trigger {kind:"retry"}, no new message, no repeated request
// header) that calls the model again from step 1. The retry number counts
// on through the chain and restarts after a call that succeeds; once the
// policy's MaxRetries is reached, or for a failure it does not retry, the
// turn ends with the failure and no retry turn follows.
//
// # Tools
//
// Arguments are validated against each tool's JSON Schema parameters: a
// violation is the result "Error: invalid arguments: …", an unknown tool
// "Error: unknown tool \"…\"", a failing tool "Error: <message>", each with
// isError and, for a typed failure, {name, code}. Consecutive calls of
// concurrency-safe tools run at once; every other call runs alone;
// results are logged in the order the model made the calls.
package modelagent
