package event

// Payload is what one logged event says, read by its type: the root
// package's Event.Payload returns a UserMessage (user/message),
// AssistantMessage, Delta (assistant/chunk), ToolCall, ToolResult, Retry
// (llm/retry) or TurnEnd, and nil for the runtime's other events. EventType
// is the type of the event it was read from.
type Payload interface {
	EventType() string
}

// AssistantMessage is an assistant/message: the content of one message an
// agent said (text, reasoning and tool-call blocks).
type AssistantMessage struct {
	Content []Block
}

// Delta is an assistant/chunk streaming text: a piece of an assistant
// message's text, or of the model's reasoning when Reasoning is true. The
// other chunks (a block's start and end, tool call arguments, usage, the
// finish) are not read.
type Delta struct {
	Text      string
	Reasoning bool
}

// ToolCall is a tool/call, logged when a call starts: its id, the tool's
// name and the model's raw argument string.
type ToolCall struct {
	CallID    string
	Name      string
	Arguments string
}

// ToolResult is a tool/result: the results its message carries, in order
// (one, as the runtime writes it).
type ToolResult struct {
	Results []ToolOutput
}

// ToolOutput is one tool result: the call it answers, its content and
// whether the tool failed.
type ToolOutput struct {
	CallID  string
	Content []Block
	IsError bool
}

// Retry is an llm/retry: a failed model call about to be retried. Attempt
// counts the retries from 1, MaxRetries is nil when no limit was logged,
// DelayMs is the wait before it (jitter and all, so it may have a
// fraction), and Message and Code are the failure's.
type Retry struct {
	Attempt    int
	MaxRetries *int
	DelayMs    float64
	Message    string
	Code       string
}

// TurnEnd is a turn/end: the turn (counted from 1 in a log) and how it
// ended. Reason is the kind, an agent's stop reason ("completed",
// "aborted", "error", "max-tokens", "refusal") or one the runtime writes
// ("disposed", "interrupted" after a crash, "blocked"); for a failed turn
// Message and Code are its failure's, whichever shape the log holds it in
// ("" when it has none).
type TurnEnd struct {
	Turn    int
	Reason  string
	Message string
	Code    string
}

// EventType is "assistant/message".
func (AssistantMessage) EventType() string { return "assistant/message" }

// EventType is "assistant/chunk".
func (Delta) EventType() string { return "assistant/chunk" }

// EventType is "tool/call".
func (ToolCall) EventType() string { return "tool/call" }

// EventType is "tool/result".
func (ToolResult) EventType() string { return "tool/result" }

// EventType is "llm/retry".
func (Retry) EventType() string { return "llm/retry" }

// EventType is "turn/end".
func (TurnEnd) EventType() string { return "turn/end" }
