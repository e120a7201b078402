// Package event is what an agent exchanges with the runtime: a message's
// content (Block, Text, TextOf, ToolCallBlock), the user
// message a turn opens with (UserMessage and its Source), the attribution
// of assistant messages (ModelSource), a tool failure's {name, code}
// (ToolFailure) and the tool filter of an agent's options (ToolFilter).
// Each type is written in the original harness's JSON shape and key order,
// so that a value an agent produces is what the session log holds, and
// Marshal writes any value that way.
//
// A logged event reads as a Payload (the root package's Event.Payload):
// the user message, an AssistantMessage, a streamed Delta of text or
// reasoning, a ToolCall, a ToolResult, a Retry of a model call and a
// TurnEnd, each holding what a reader of the transcript needs.
//
// Nothing here blocks. The log's own vocabulary (the event type names, the
// turn and step payloads as written, the codec) and the model's transcript
// (request headers, the other streamed chunks, usage) are internal to the
// runtime.
package event
