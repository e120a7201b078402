// Package event is what an agent and a model exchange with the runtime:
// a message's content (Block, Text, TextOf, ToolCallBlock, LooseBlock), the
// user message a turn opens with (UserMessage and its Source), the model's
// side (ModelSource, Usage, Failure, the streamed Chunk and its
// FinishReason, the request Header and RequestContext), and the tool
// descriptions and filters (ToolSpec, ToolFilter, ToolFailure). Each type
// is written in the original harness's JSON shape and key order, so that a
// value an agent produces is what the session log holds.
//
// Nothing here blocks. The log's own vocabulary (the event type names, the
// turn and step payloads, the codec) is internal to the runtime.
package event
