package activation

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// newModelSource attributes the agent's assistant messages, defaulting
// an empty provider or model.
func newModelSource(provider, model string) event.ModelSource {
	if provider == "" {
		provider = vocab.DefaultProvider
	}
	if model == "" {
		model = vocab.DefaultModel
	}
	return event.ModelSource{Kind: event.SourceModel, Provider: provider, Model: model}
}

// errTurnOver is returned by the Host's appends after its turn has ended.
var errTurnOver = errors.New("actors: the turn is over")

// turn is the agent.Host of one running turn. mu orders its appends.
type turn struct {
	a      *Activation
	number int
	chain  int64 // seq of the turn/start of the message that opened the chain
	mu     sync.Mutex
	step   int              // the number of the last step opened
	open   *step            // the open step, nil between steps
	calls  map[string]int64 // call id → seq of its tool/call in this turn
	over   bool
}

// runTurn runs one claimed message start to end on its own goroutine and
// then releases the inbox for the next message. A message the session
// refuses to log (its log failed) is not run: it is reported lost. A turn
// whose log was fenced meanwhile is reported failed and writes nothing
// more. The end of a cancelled turn is written through to the store on
// this goroutine before the inbox is released: whoever cancelled it (a
// teardown, an interrupt) waits for it to be durable, and the next turn,
// if any, waits behind it. A turn the agent ends with agent.Retry is
// followed, unless it was cancelled, by a retry turn over the same
// message, before the inbox is released: a retry chain is one claim.
func (a *Activation) runTurn(claim *inbox.Claim) {
	defer a.inbox.EndTurn()
	if !a.counted {
		a.lastTurn, a.counted = lastTurn(a.live.Events()), true
	}
	source := claim.Message.Source
	t, err := a.openTurn(vocab.Trigger{Kind: vocab.TriggerMessage, Source: &source})
	if err == nil {
		_, err = a.append(claim.Message, session.Surface())
	}
	if err != nil { // the log failed: the message can never be logged
		a.refused(claim.Message.ID, err)
		return
	}
	chain := t.chain
	for t.runAndEnd(claim) {
		if t, err = a.openTurn(vocab.Trigger{Kind: vocab.TriggerRetry}); err != nil {
			a.inbox.Discard() // the log failed; its failure hook reports what was lost
			return
		}
		t.chain = chain
	}
}

// openTurn counts and logs the next turn/start.
func (a *Activation) openTurn(trigger vocab.Trigger) (*turn, error) {
	a.lastTurn++
	t := &turn{a: a, number: a.lastTurn}
	seq, err := a.append(vocab.TurnStart{Turn: t.number, Trigger: &trigger})
	t.chain = seq
	return t, err
}

// runAndEnd calls the agent, then closes the step it left open and logs
// turn/end. It reports whether a retry turn follows: the agent asked for
// one, its log was not fenced and the turn was not cancelled by the time
// its turn/end was logged (a cancel after that stops the chain as it
// would find a turn that had ended: no retry turn opens).
func (t *turn) runAndEnd(claim *inbox.Claim) (retry bool) {
	reason, retry := t.run(claim)
	open := t.finish()
	if t.a.reportFenced(t.number) { // nothing more under the old epoch, no retry
		return false
	}
	if open != 0 {
		t.a.append(vocab.Step{Turn: t.number, Step: open, Kind: vocab.TypeStepEnd})
	}
	if reason.Kind == vocab.ReasonError {
		reason.Step = failedStep(open, t.step, retry)
	}
	end := vocab.TurnEnd{Turn: t.number, Reason: reason}
	if _, cancelled := claim.Cause(); cancelled { // as reasonOf decides
		if t.a.appendThrough(end) {
			t.a.closed(t.chain, reason.Kind)
		}
		return false
	}
	if _, err := t.a.append(end); err == nil {
		t.a.closed(t.chain, reason.Kind)
	}
	_, cancelled := claim.Cause()
	return retry && !cancelled
}

// failedStep is the step an error reason names: the step left open when
// the turn failed; for a retried turn the last step it opened, which the
// agent ended before asking for the retry; else, as the original's loop
// counts a step before running it, the step after the last one the turn
// logged.
func failedStep(open, last int, retried bool) int {
	switch {
	case open != 0:
		return open
	case retried:
		return last
	}
	return last + 1
}

// run calls the agent with the claimed message, turning a panic into an
// error reason (or, in a cancelled turn, the aborted one). retry is true
// when the agent asked for a retry turn and the turn was not cancelled.
func (t *turn) run(claim *inbox.Claim) (reason vocab.Reason, retry bool) {
	defer func() {
		if r := recover(); r != nil {
			t.a.kit.logger.Error("actors: turn panicked", "agent", t.a.id(), "turn", t.number, "panic", r)
			reason, retry = errorReason(fmt.Sprintf("panic: %v", r), panicCode(r)), false
			if cause, cancelled := claim.Cause(); cancelled {
				reason = abortedReason(cause)
			}
		}
	}()
	stop, err := t.a.agent.RunTurn(claim.Context(), t, claim.Message)
	reason = reasonOf(claim, stop, err)
	return reason, stop == agent.Retry && err != nil && reason.Kind == vocab.ReasonError
}

// reasonOf maps what the agent returned to the turn/end reason.
// Interruption beats error, and the abort signal is checked once more
// before turn/end: a cancelled turn ends
// aborted (or disposed) whatever the agent reports. The cause is the
// claim's, read without the turn context's lock.
func reasonOf(claim *inbox.Claim, stop agent.StopReason, err error) vocab.Reason {
	cause, cancelled := claim.Cause()
	switch {
	case cancelled || stop == agent.Aborted:
		return abortedReason(cause)
	case stop == agent.Completed && err == nil:
		return vocab.Reason{Kind: vocab.ReasonCompleted}
	case err != nil: // Retry's failure included
		if f, ok := failureOf(err); ok {
			return vocab.Reason{Kind: vocab.ReasonError, Failure: &f}
		}
		return errorReason(err.Error(), codeOf(err))
	case stop == agent.MaxTokens:
		return vocab.Reason{Kind: vocab.ReasonMaxTokens}
	case stop == agent.Refusal:
		return vocab.Reason{Kind: vocab.ReasonRefusal}
	default: // agent.Error without an error, or an unknown reason
		return errorReason(fmt.Sprintf("turn ended with stop reason %q", stop), "")
	}
}

// failureOf finds a model failure (vocab.Failure, as a value or a
// pointer) in err's chain.
func failureOf(err error) (vocab.Failure, bool) {
	var f vocab.Failure
	if errors.As(err, &f) {
		return f, true
	}
	var p *vocab.Failure
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return vocab.Failure{}, false
}

// abortedReason is the turn/end reason of a cancelled turn:
// {kind:"disposed"} when the agent is being disposed, else exactly
// {kind:"aborted"} (also for a turn the agent reported aborted without
// being cancelled, whose cause is the zero one). It carries no inner cause,
// because older readers refuse to resume a log whose aborted reason has one.
func abortedReason(cause agent.CancelCause) vocab.Reason {
	if cause.Kind == agent.CauseDisposed {
		return vocab.Reason{Kind: vocab.ReasonDisposed}
	}
	return vocab.Reason{Kind: vocab.ReasonAborted}
}

// nonNilContent logs absent content as [], the array the original requires.
func nonNilContent(content []event.Block) []event.Block {
	if content == nil {
		return []event.Block{}
	}
	return content
}

// errorReason is a thrown error's reason; its step is set when the turn
// ends.
func errorReason(message, code string) vocab.Reason {
	return vocab.Reason{Kind: vocab.ReasonError, Message: message, Code: code}
}

// codeOf is err's ErrorCode() when some error in its chain has one, else
// "": only errors that carry a code get one in the log.
func codeOf(err error) string {
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) {
		return coded.ErrorCode()
	}
	return ""
}

// panicCode is the code of a panic's value when it is an error with one.
func panicCode(r any) string {
	if err, ok := r.(error); ok {
		return codeOf(err)
	}
	return ""
}

// finish marks the turn over (later Host calls fail) and returns the
// number of the step left open, 0 when none is.
func (t *turn) finish() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.over = true
	if t.open == nil {
		return 0
	}
	return t.open.number
}

// SessionID is the agent's id.
func (t *turn) SessionID() string { return t.a.id() }

// Subagents is the capability bound to this agent, or nil.
func (t *turn) Subagents() agent.Subagents {
	if t.a.subagents == nil {
		return nil
	}
	return t.a.subagents()
}

// Conversation is the agent's conversation (see agent.Host).
func (t *turn) Conversation() ([]agent.Entry, error) { return t.a.Conversation() }

// lock takes the turn's lock for an append: it fails, unlocked, once ctx
// is done or the turn is over.
func (t *turn) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	t.mu.Lock()
	if t.over {
		t.mu.Unlock()
		return errTurnOver
	}
	return nil
}

// Say logs one step holding one assistant message: step/start,
// assistant/message, step/end.
func (t *turn) Say(ctx context.Context, content []event.Block) error {
	if err := t.lock(ctx); err != nil {
		return err
	}
	defer t.mu.Unlock()
	if t.open != nil {
		return errStepOpen(t.open.number)
	}
	t.step++
	mark := vocab.Step{Turn: t.number, Step: t.step, Kind: vocab.TypeStepStart}
	end := mark
	end.Kind = vocab.TypeStepEnd
	_, err := t.a.append(mark)
	msg := t.message(content, nil)
	seq, errMessage := t.a.append(msg, session.Surface())
	if errMessage == nil {
		t.a.said(seq)
		t.a.remember(seq, msg)
	}
	_, errEnd := t.a.append(end)
	return errors.Join(err, errMessage, errEnd)
}

// message is the assistant/message of content in the current step.
func (t *turn) message(content []event.Block, usage *vocab.Usage) vocab.AssistantMessage {
	return vocab.AssistantMessage{Turn: t.number, Step: t.step, Usage: usage, Message: vocab.Message{
		Role: event.RoleAssistant, Content: nonNilContent(content), Source: *t.a.source, ID: inbox.NewMessageID(),
	}}
}

func errStepOpen(n int) error { return fmt.Errorf("actors: step %d is still open", n) }

// Step opens the next step (see agent.Host).
func (t *turn) Step(ctx context.Context) (agent.Step, error) {
	if err := t.lock(ctx); err != nil {
		return nil, err
	}
	defer t.mu.Unlock()
	if t.open != nil {
		return nil, errStepOpen(t.open.number)
	}
	t.step++
	if _, err := t.a.append(vocab.Step{Turn: t.number, Step: t.step, Kind: vocab.TypeStepStart}); err != nil {
		t.step--
		return nil, err
	}
	t.open = &step{t: t, number: t.step}
	return t.open, nil
}

// step is one open step of a turn: an agent.Step and the model's
// vocab.Transcript. Its appends hold the turn's lock.
type step struct {
	t      *turn
	number int
	chunks []int64 // seqs of the step's assistant/chunk events
	ended  bool
}

var (
	_ agent.Step       = (*step)(nil)
	_ vocab.Transcript = (*step)(nil)
)

// errStepEnded is returned by a step's appends after End.
var errStepEnded = errors.New("actors: the step has ended")

// lock takes the turn's lock for an append to this step.
func (s *step) lock(ctx context.Context) error {
	if err := s.t.lock(ctx); err != nil {
		return err
	}
	if s.ended {
		s.t.mu.Unlock()
		return errStepEnded
	}
	return nil
}

// Number is the step's number within its turn.
func (s *step) Number() int { return s.number }

// RequestHeader logs request/header.
func (s *step) RequestHeader(ctx context.Context, header vocab.Header, reason string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.t.mu.Unlock()
	_, err := s.t.a.append(vocab.RequestHeader{Header: header, Reason: reason})
	return err
}

// RequestContext logs request/context.
func (s *step) RequestContext(ctx context.Context, rc vocab.RequestContext) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.t.mu.Unlock()
	_, err := s.t.a.append(rc)
	return err
}

// Chunk logs one assistant/chunk and remembers its seq for Message.
func (s *step) Chunk(ctx context.Context, chunk vocab.Chunk) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.t.mu.Unlock()
	seq, err := s.t.a.append(vocab.AssistantChunk{Turn: s.t.number, Step: s.number, Chunk: chunk})
	if err == nil {
		s.chunks = append(s.chunks, seq)
	}
	return err
}

// Message logs the step's assistant/message citing its chunks.
func (s *step) Message(ctx context.Context, content []event.Block) (string, error) {
	return s.MessageWithUsage(ctx, content, nil)
}

// MessageWithUsage logs the step's assistant/message with usage, citing
// its chunks.
func (s *step) MessageWithUsage(ctx context.Context, content []event.Block, usage *vocab.Usage) (string, error) {
	if err := s.lock(ctx); err != nil {
		return "", err
	}
	defer s.t.mu.Unlock()
	msg := s.t.message(content, usage)
	seq, err := s.t.a.append(msg, session.Sources(s.chunks...), session.Surface())
	if err != nil {
		return "", err
	}
	s.t.a.said(seq)
	s.t.a.remember(seq, msg)
	return msg.Message.ID, nil
}

// ToolCall logs tool/call and remembers its seq for ToolResult.
func (s *step) ToolCall(ctx context.Context, call event.ToolCallBlock) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.t.mu.Unlock()
	seq, err := s.t.a.append(vocab.ToolCall{Turn: s.t.number, Step: s.number, CallID: call.ID, Name: call.Name, Arguments: call.Arguments})
	if err != nil {
		return err
	}
	if s.t.calls == nil {
		s.t.calls = map[string]int64{}
	}
	s.t.calls[call.ID] = seq
	return nil
}

// ToolResult logs tool/result citing the call's tool/call.
func (s *step) ToolResult(ctx context.Context, r agent.ToolResult) (string, error) {
	if err := s.lock(ctx); err != nil {
		return "", err
	}
	defer s.t.mu.Unlock()
	callSeq, ok := s.t.calls[r.CallID]
	if !ok {
		return "", fmt.Errorf("actors: no tool/call logged for call %q in this turn", r.CallID)
	}
	result := vocab.ToolResult{Turn: s.t.number, Step: s.number, Error: r.Error, Meta: r.Meta, Message: vocab.ToolResultMessage{
		Source: event.Source{Kind: event.SourceTool, CallID: r.CallID},
		Content: []vocab.ToolResultBlock{{
			Type: event.BlockToolResult, ToolCallID: r.CallID, Content: nonNilContent(r.Content), IsError: r.IsError,
		}},
		Role: event.RoleUser,
		ID:   inbox.NewMessageID(),
	}}
	if _, err := s.t.a.append(result, session.Sources(callSeq), session.Surface()); err != nil {
		return "", err
	}
	return result.Message.ID, nil
}

// End logs step/end once.
func (s *step) End(ctx context.Context) error {
	if err := s.t.lock(ctx); err != nil {
		return err
	}
	defer s.t.mu.Unlock()
	if s.ended {
		return nil
	}
	s.ended = true
	s.t.open = nil
	_, err := s.t.a.append(vocab.Step{Turn: s.t.number, Step: s.number, Kind: vocab.TypeStepEnd})
	return err
}

// Retry logs llm/retry for this step, after its End: the model call the
// step made failed and is about to be retried (its turn and step are the
// step's own).
func (s *step) Retry(ctx context.Context, r vocab.LLMRetry) error {
	if err := s.t.lock(ctx); err != nil {
		return err
	}
	defer s.t.mu.Unlock()
	r.Turn, r.Step = s.t.number, s.number
	_, err := s.t.a.append(r)
	return err
}

// append logs one event and returns its seq; a refused append is logged
// and returned.
func (a *Activation) append(p vocab.Payload, opts ...session.AppendOption) (int64, error) {
	data, err := vocab.Encode(p)
	if err != nil {
		return 0, a.logged(p.EventType(), err)
	}
	e, err := a.live.Append(p.EventType(), vocab.Owned(data), opts...)
	return e.Seq, a.logged(p.EventType(), err)
}

// appendThrough logs one event and writes it through (Live.AppendThrough);
// it reports whether the event is in the session, even when its write
// then failed.
func (a *Activation) appendThrough(p vocab.Payload) (added bool) {
	data, err := vocab.Encode(p)
	var e session.Event
	if err == nil {
		e, err = a.live.AppendThrough(p.EventType(), vocab.Owned(data))
	}
	a.logged(p.EventType(), err)
	return e.Type != ""
}

// logged logs a refused or failed append and returns err.
func (a *Activation) logged(typ string, err error) error {
	if err != nil {
		a.kit.logger.Error("actors: session append failed", "agent", a.id(), "type", typ, "err", err)
	}
	return err
}
