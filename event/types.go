package event

// The content block types the runtime reads or writes.
const (
	BlockText       = "text"
	BlockReasoning  = "reasoning"
	BlockToolCall   = "tool-call"
	BlockToolResult = "tool-result"
)

// The message roles and source kinds. RoleTool is the role of a tool
// result in a conversation as agents and models see it; the log records
// that message with role RoleUser and source kind SourceTool.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"

	SourceUser        = "user"
	SourceCoordinator = "coordinator"
	SourceTool        = "tool"
	SourceModel       = "model"
)
