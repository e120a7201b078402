// Package activation is the agent actor: one protoactor actor per live
// agent, whose mailbox is the agent's inbox (package inbox), running one
// turn per message, one at a time, in FIFO order.
//
// When the mailbox claims a message it hands the actor an *inbox.Claim; the
// actor's Receive starts the turn in a goroutine of its own and returns at
// once, so no dispatcher worker is held while a turn runs and system
// messages (Stop, supervision) are still processed. The turn goroutine logs,
// through the session's write-behind Live.Append:
//
//	turn/start     {turn, trigger:{kind:"message", source}}, source the message's
//	user/message   the claimed message {content, source, role:"user", id}, surfaceOp "append"
//	step/start     {turn, step}                      \
//	assistant/message {turn, step, message:{role:"assistant",  > once per Host.Say
//	               content, source:{kind:"model", provider,   |
//	               model}, id}}, surfaceOp "append"           |
//	step/end       {turn, step}                      /
//	turn/end       {turn, reason}
//
// and then releases the inbox for the next message. As in the original's
// agent loop, the turn exists in the log before the message it consumes.
// These payloads are internal/vocab's, byte for byte.
// A model agent logs its steps through Host.Step instead of Host.Say:
// step/start, request/header, request/context, assistant/chunk… (through
// the step's vocab.Transcript), assistant/message (sourceEventSeqs: the
// step's chunks), tool/call and tool/result (sourceEventSeqs: its
// tool/call), step/end. A step the agent
// leaves open when its turn ends is closed with step/end before turn/end.
// A turn that says nothing has no step events (the original's always
// steps at least once).
// A turn the agent ends with agent.Retry and a failure ends in error, its
// step the last step it opened, and is followed at once by a retry turn
// over the same claimed message: turn/start {turn, trigger:{kind:"retry"}}
// with no user/message, steps from 1 again. Only then is the inbox
// released, so a retry chain is one FIFO turn; a cancel before the agent
// returns ends the turn aborted (or disposed) and no retry turn opens, nor
// does one when the cancel comes after the failed turn's end, before the
// retry turn's start.
// The turn/end reason is {kind:"completed"}, {kind:"max-tokens"},
// {kind:"refusal"}, {kind:"disposed"} (cancelled by the agent's disposal),
// {kind:"aborted"} (any other cancel, with no inner cause), a model failure's {kind:"error", step, failure:{message, code,
// …}} (the agent returned a vocab.Failure) or
// {kind:"error", step, message, code?}: step is the step left open when
// the turn failed, else the step the failure happened on counted as the
// original's loop counts a step before running it (the step after the
// last one the turn logged, so 1 for a turn that failed before saying
// anything), message is
// the error's text ("panic: VALUE" for a panic), and code is present only
// when the error (or the panic's value) has an ErrorCode() method, as the
// original writes a code only for a HarnessError. Later versions of the
// original read that shape as {kind:"error", error:{message, code}}, code
// defaulting to "UNKNOWN", the shape this runtime wrote before; its readers
// (the epoch capture, dsh-actors show, the web page) read both. A panic
// inside a turn is a failed turn: it is recovered, logged as turn/end
// error, and the agent goes on with its next message.
//
// Activation.Conversation (and Host.Conversation) folds the session's
// surface incrementally over the live events in memory, decoding each
// message once, so a read at a turn's start copies entries rather than
// re-parsing the log.
//
// {kind:"refusal"} (agent.Refusal) is the one reason the original's agent
// loop never writes: its TurnEndReasonMap is merge-extensible and leaves
// out the ACP-named refusal variant until a producer emits it, as this
// runtime's agents can. The original loads such a turn/end unchanged (its
// load checks only aborted reasons; later versions pass unknown kinds
// through their legacy conversion) and its epoch capture reports it as
// error; this runtime's (the manager's mapTurnEnd) reports refusal, a
// subagent stop reason, settled as failed like error and
// max-tokens.
//
// A turn whose context
// was cancelled ends aborted (or disposed) whatever the agent then reports,
// completed, max-tokens, refusal, an error or a panic: interruption beats
// error, and the abort signal is checked once more before turn/end; an agent returning Aborted without a
// cancellation counts as a user abort. Turn numbers continue from the highest turn/start already in
// the session (a resumed agent counts on).
//
// The actor is spawned under a guardian that stops it: a panic in the
// actor's own Receive stops the actor and is logged as an error; it is
// never restarted with empty state.
package activation
