package vocab

// The event types the runtime writes or reads, as the session log spells
// them.
const (
	TypeTurnStart          = "turn/start"
	TypeTurnEnd            = "turn/end"
	TypeStepStart          = "step/start"
	TypeStepEnd            = "step/end"
	TypeUserMessage        = "user/message"
	TypeAssistantChunk     = "assistant/chunk"
	TypeAssistantMessage   = "assistant/message"
	TypeToolCall           = "tool/call"
	TypeToolResult         = "tool/result"
	TypeRequestHeader      = "request/header"
	TypeRequestContext     = "request/context"
	TypeLLMRetry           = "llm/retry"
	TypeSessionEndSeed     = "session/end-seed"
	TypeSubagentDescriptor = "subagent/descriptor"
	// TypeSteeringMessage is a user message that arrived during a turn,
	// read from old logs and never written.
	TypeSteeringMessage = "steering/message"
)

// The lifecycle events the subagent service publishes to its listeners
// and the host relays as frames; they are never logged.
const (
	TypeSubagentStart           = "subagent/start"
	TypeSubagentEnd             = "subagent/end"
	TypeSubagentProviderAdded   = "subagent/provider-added"
	TypeSubagentProviderRemoved = "subagent/provider-removed"
)

// Retired types: logs holding them are refused on append and on load.
const (
	TypeRequestHeaderDelta = "request/header-delta"
	TypeModeSet            = "mode/set"
)

// OnSurface reports whether events of type typ carry a message on the
// model-visible surface (they must carry a surfaceOp; no other type may
// carry a surfaceOp or sourceEventSeqs).
func OnSurface(typ string) bool {
	switch typ {
	case TypeUserMessage, TypeAssistantMessage, TypeToolResult, TypeSteeringMessage:
		return true
	}
	return false
}

// The reason kinds of turn/end.
const (
	ReasonCompleted   = "completed"
	ReasonAborted     = "aborted"
	ReasonDisposed    = "disposed"
	ReasonMaxTokens   = "max-tokens"
	ReasonRefusal     = "refusal"
	ReasonError       = "error"
	ReasonInterrupted = "interrupted" // written only by crash repair
	ReasonBlocked     = "blocked"
)

// The trigger kinds of turn/start.
const (
	TriggerMessage   = "message"
	TriggerRetry     = "retry"
	TriggerInjection = "injection"
)
