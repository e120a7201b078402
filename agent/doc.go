// Package agent is the contract user code implements to run on dsh-actors,
// and the keyless scripted agent used by the demo, the tests and the stress
// and benchmark commands.
//
// # The turn contract
//
// An Agent runs one turn per message: RunTurn receives the message that
// opened the turn and a Host bound to the agent's identity, appends its
// output through Host.Say, may start continuable children and send them
// follow-ups through Host.Subagents, honours ctx (returning Aborted when it
// is cancelled) and returns a StopReason. A non-nil error or a panic is a
// failed turn (turn/end reason "error"); the runtime recovers the panic and
// the agent keeps serving its next message. context.Cause(ctx) of a
// cancelled turn is a CancelCause naming who cancelled it.
//
// # A model agent
//
// An agent driven by a model reads, at the start of each step, what to send
// it from Host.Conversation: the messages on its session's surface, in
// order, as typed Entry values (event.RoleUser with its Source, event.RoleAssistant
// with text, reasoning and tool-call blocks, event.RoleTool with the result of
// a call), exactly as the session query folds them, including the
// message that opened this turn and what the turn logged so far. A fork
// child's inherited prefix, a cold-resumed child's earlier epochs and
// compaction replacements are all in it; lifecycle and descriptor events
// are not. It reads memory, not the store.
//
// Each model call is one step: Host.Step logs step/start and returns a
// Step, through which the agent logs, in order, the step's Message (its
// content may hold tool-call blocks, event.ToolCallBlock.Block), then per
// call ToolCall as the call starts and ToolResult when it ends (citing the
// tool/call), and End. A step with tool calls leads to the next Step; a
// step that answers in text ends the turn with Completed. An error ends
// the turn {kind:"error", step, message, code?} (code when the error has
// an ErrorCode() method) with the step left open: the runtime writes
// step/end and then turn/end. An agent that wants the same message run
// again ends the step and returns (Retry, the failure): the turn ends the
// same way, naming that step, and the runtime runs the same message again
// as a retry turn (trigger {kind:"retry"}, no new user/message) unless the
// turn was cancelled. Host.Say is the one-call shortcut for an agent
// without a model: one whole step holding one message.
//
// The model's own transcript (the request header and context, the
// streamed chunks, the response's usage, llm/retry records and the model
// failure of turn/end {kind:"error", step, failure}) is the model agent's
// (package modelagent), which logs it through the runtime's steps.
//
// A Factory builds an Agent from Options; the runtime uses it for every
// agent it starts or cold-resumes. The default factory is Scripted.
//
// # The scripted agent
//
// Scripted needs no key and no network. It reads the text of the message
// that opened the turn, one command a line (blank lines are skipped, the
// command word ends at the first white space):
//
//	reply TEXT              append an assistant message holding TEXT
//	sleep DURATION          wait DURATION (time.ParseDuration); a cancelled
//	                        turn ends at once with stop reason aborted
//	spawn LABEL: PROMPT     start a continuable child with that label and
//	                        first prompt; then reply "spawned LABEL CHILD_ID"
//	fork LABEL: PROMPT      the same through the fork provider: the child's
//	                        conversation starts with this agent's completed
//	                        turns; then reply "forked LABEL CHILD_ID"
//	history                 reply with the conversation the agent sees, one
//	                        line per message, "ROLE: TEXT" (ROLE user,
//	                        assistant or tool; TEXT the message's text with
//	                        newlines as spaces, cut at 60 characters),
//	                        including the message that opened this turn
//	send CHILD_ID: TEXT     send TEXT to that child as its next turn; then
//	                        reply "sent MESSAGE_ID to CHILD_ID"
//	fail MESSAGE            end the turn with an error whose message is MESSAGE
//	panic                   panic inside the turn (a failed turn, not a crash)
//	refuse                  end the turn with stop reason refusal
//	max-tokens              end the turn with stop reason max-tokens
//
// A message is a script when at least one of its lines starts with one of
// these command words. Every line of a script must then be a command: a line
// with any other first word fails the turn, before anything runs, with the
// error `scripted: unknown command "WORD"`. A message without any command
// line is plain text and the agent replies with the text unchanged (echo).
// The commands run in order; fail, panic, refuse and max-tokens end the turn
// where they stand. spawn, fork and send fail the turn when the runtime has no
// subagent service.
package agent
