package vocab

import "fmt"

// known is every event type a stored log may hold without marking it
// ignorable: the original harness's generated vocabulary, plus the
// retired steering/message its reads convert to a user message.
var known = map[string]bool{
	"agent-preset/selected": true, "agent/inbox/spliced": true, "approval/asked": true,
	"approval/decided": true, "approval/policy": true, "assistant/chunk": true,
	"assistant/message": true, "command/done": true, "command/run": true,
	"compaction/end": true, "compaction/prune": true, "compaction/start": true,
	"compaction/summary": true, "feedback/record": true, "goal/change": true,
	"hook/invoked": true, "hook/result": true, "llm/retry": true,
	"llm/retry-started": true, "permission/preset": true, "plan/mode": true,
	"request/context": true, "request/header": true, "sandbox/mode": true,
	"schedule/change": true, "session/end-seed": true, "session/title": true,
	"session/title-llm-request": true, "step/end": true, "step/start": true,
	"subagent/descriptor": true, "team/member": true, "team/message/delivered": true,
	"team/message/queued": true, "team/task": true, "todo/write": true,
	"tool-workflow/agent-end": true, "tool-workflow/agent-start": true,
	"tool-workflow/run-end": true, "tool-workflow/run-start": true, "tool/call": true,
	"tool/code-dispatch": true, "tool/code-dispatch-start": true, "tool/result": true,
	"turn/end": true, "turn/start": true, "user/message": true,
	"web/deepseek-search-llm-request": true,
	TypeSteeringMessage:               true,
}

// Known reports whether a stored event of type typ can be read without an
// ignorable mark.
func Known(typ string) bool { return known[typ] }

// UnknownTypeMessage is what a read says when it refuses the log of session
// id, stored at path, because its event seq has type typ, which is not
// Known, and is not marked ignorable.
func UnknownTypeMessage(id, typ string, seq int64, path string) string {
	return fmt.Sprintf(`session "%s" contains event type "%s" (seq %d) unknown to this harness and not marked ignorable; `+
		"refusing to interpret the log — it was likely written by a newer harness (raw log: %s)", id, typ, seq, path)
}
