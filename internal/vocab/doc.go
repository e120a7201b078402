// Package vocab is the session log's vocabulary: the name of every event
// type the runtime writes or reads (the Type… constants), a payload struct
// per type with the original harness's key order, and the one codec
// between them and an event's data. The content and message types a
// payload holds (Block, UserMessage, ToolFailure, …) are package event's,
// which embedders see; the model's transcript (the request Header and
// RequestContext, the streamed Chunk and its FinishReason, Usage, Failure)
// is defined here, and Transcript is the step interface the model agent
// logs it through.
//
// Encode writes a Payload as compact JSON the way JSON.stringify would (no
// HTML escaping), to be appended under p.EventType(). Decode reads an
// event's data by its type into the payload struct (a value:
// event.UserMessage, TurnEnd, Step, AssistantMessage, …); DecodeAs asks
// for one payload type. A type without a payload here is ErrUnknownType
// (subagent/descriptor's payload is package descriptor's). Nothing here
// blocks.
//
// The payloads of a model turn, in the order a step logs them:
//
//	turn/start        TurnStart{Turn, Trigger}
//	user/message      event.UserMessage{Content, Source, Role, ID}  (surface)
//	step/start        Step{Turn, Step}                               steps count from 1 per turn
//	request/header    RequestHeader{Header{Config, AdapterDefaults, System, Tools}, Reason}
//	request/context   RequestContext{Provider, Model, ContextWindow}
//	assistant/chunk   AssistantChunk{Turn, Step, Chunk}              Chunk: block-start, text-delta,
//	                                                                 reasoning-delta, tool-call-delta,
//	                                                                 block-end, usage, finish
//	assistant/message AssistantMessage{Turn, Step, Message, Usage}  (surface; cites the chunks)
//	tool/call         ToolCall{Turn, Step, CallID, Name, Arguments}
//	tool/result       ToolResult{Turn, Step, Message, Error, Meta}   (surface; cites its tool/call)
//	step/end          Step{Turn, Step}
//	turn/end          TurnEnd{Turn, Reason}
//
// Reason reads every turn/end reason shape the original writes (see its
// doc) and Text and ErrorCode find a failure's message and code in any of
// them.
//
// The envelope (seq, time, sourceEventSeqs, surfaceOp) is package
// session's; OnSurface names the types that carry a surfaceOp.
package vocab
