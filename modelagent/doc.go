// Package modelagent is the agent a language model drives: an
// agent.Factory whose agents run the tool loop over their own
// conversation, and the tool registry with the four model-facing subagent
// tools (subagent, subagent_fork, send_message, list_agents).
//
// # The model
//
// New builds the model client from Config: OpenAI-compatible streaming
// chat completions at BaseURL (DeepSeek's by default), the key sent as a
// bearer token. The API profile decides the extra fields: "deepseek" sends
// thinking and reasoning_effort (and reasoning back beside tool calls);
// "openai" (Ollama, vLLM and other servers) sends neither unless asked,
// and takes response_format json_schema. Reasoning is read from
// reasoning_content or reasoning. A failed HTTP call's logged message
// names the status and the URL. A failed call carries a failure code, which the retry
// policy matches and the log records: AUTH, QUOTA, RATE_LIMIT, SERVER,
// TIMEOUT, TRANSPORT, EMPTY_RESPONSE, CONTEXT_WINDOW_EXCEEDED, … (an
// unexpected HTTP status is HTTP_<status>, a finish reason the client does
// not know that reason upper-cased). For tests and examples, package
// modelagenttest serves scripted responses on loopback.
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
// Besides the four subagent tools, Config.MCPServers offers the tools of
// MCP servers (stdio or streamable HTTP, through the official Go SDK) as
// mcp__<server>__<tool>, and Config.Tools offers the embedder's own
// (a Tool: a name, a description, a JSON Schema for the arguments object,
// a Run that gets ctx, the calling agent's id and the validated
// arguments). An agent's tool filter applies to every tool alike.
//
// Arguments are validated against each tool's JSON Schema parameters (by
// github.com/santhosh-tekuri/jsonschema, draft 2020-12; a $ref outside the
// schema is refused when New compiles it): a
// violation is the result "Error: invalid arguments: …", an unknown tool
// "Error: unknown tool \"…\"", a failing tool "Error: <message>", each with
// isError and, for a typed failure, {name, code}. Consecutive calls of
// concurrency-safe tools run at once; every other call runs alone;
// results are logged in the order the model made the calls.
package modelagent
