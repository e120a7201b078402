package activation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/session"
)

// Payloads of the events a turn logs, with the original's key order.
type (
	turnStart struct {
		Turn    int      `json:"turn"`
		Trigger *trigger `json:"trigger,omitempty"`
	}
	trigger struct {
		Kind   string       `json:"kind"`
		Source agent.Source `json:"source"`
	}
	turnEnd struct {
		Turn   int `json:"turn"`
		Reason any `json:"reason"` // kindOnly or errorEnd
	}
	kindOnly struct {
		Kind string `json:"kind"`
	}
	// errorEnd is the seed-era agent loop's error reason (agent.ts settle:
	// {kind:'error', step, message: errorChain(error), ...code}).
	errorEnd struct {
		Kind    string `json:"kind"`
		Step    int    `json:"step"`
		Message string `json:"message"`
		Code    string `json:"code,omitempty"`
	}
	assistantEvent struct {
		Turn    int              `json:"turn"`
		Step    int              `json:"step"`
		Message assistantMessage `json:"message"`
	}
	assistantMessage struct {
		Role    string        `json:"role"`
		Content []agent.Block `json:"content"`
		Source  modelSource   `json:"source"`
		ID      string        `json:"id"`
	}
	modelSource struct {
		Kind     string `json:"kind"`
		Provider string `json:"provider"`
		Model    string `json:"model"`
	}
)

// turnStartJSON is turn/start {turn, trigger:{kind:"message", source}}:
// every turn here is opened by an inbox message, whose source the trigger
// repeats, as the original's does. The fixed-shape payloads of every turn
// are written directly rather than through encoding/json's reflection:
// they are most of the events a turn logs. A source with more than a
// plain kind is left to encoding/json.
func turnStartJSON(turn int, source agent.Source) any {
	if source.SenderSessionID != "" || source.RPCID != "" || !plainKind(source.Kind) {
		return turnStart{Turn: turn, Trigger: &trigger{Kind: "message", Source: source}}
	}
	b := appendTurn(make([]byte, 0, 80+len(source.Kind)), turn)
	b = append(append(b, `,"trigger":{"kind":"message","source":{"kind":"`...), source.Kind...)
	return json.RawMessage(append(b, `"}}}`...))
}

// appendTurn appends {"turn":N to b; callers size b for the whole payload
// so that it is built in one allocation.
func appendTurn(b []byte, turn int) []byte {
	return strconv.AppendInt(append(b, `{"turn":`...), int64(turn), 10)
}

// stepJSON is step/start and step/end {turn, step}.
func stepJSON(turn, step int) json.RawMessage {
	b := appendTurn(make([]byte, 0, 64), turn)
	b = strconv.AppendInt(append(b, `,"step":`...), int64(step), 10)
	return append(b, '}')
}

// endReason is why a turn ended: its kind and, for an error, the failure.
type endReason struct {
	Kind  string
	Error *failure
}

// failure is an error reason's detail: the step the failure happened on,
// the error's text, and its code ("" when the error has none).
type failure struct {
	Step    int
	Message string
	Code    string
}

// turnEndJSON is turn/end {turn, reason}. An error reason is the seed-era
// {kind:"error", step, message, code?}, written by encoding/json; any other
// reason is {kind}, hand-written when the kind is plain (lower-case letters
// and dashes, as every kind the runtime assigns), byte for byte what
// encoding/json writes.
func turnEndJSON(turn int, reason endReason) any {
	if f := reason.Error; f != nil {
		return turnEnd{Turn: turn, Reason: errorEnd{Kind: reason.Kind, Step: f.Step, Message: f.Message, Code: f.Code}}
	}
	if !plainKind(reason.Kind) {
		return turnEnd{Turn: turn, Reason: kindOnly{Kind: reason.Kind}}
	}
	b := appendTurn(make([]byte, 0, 56+len(reason.Kind)), turn)
	b = append(append(b, `,"reason":{"kind":"`...), reason.Kind...)
	return json.RawMessage(append(b, `"}}`...))
}

func plainKind(kind string) bool {
	for i := 0; i < len(kind); i++ {
		if c := kind[i]; (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return true
}

func newModelSource(provider, model string) modelSource {
	if provider == "" {
		provider = agent.DefaultProvider
	}
	if model == "" {
		model = agent.DefaultModel
	}
	return modelSource{Kind: "model", Provider: provider, Model: model}
}

// errTurnOver is returned by Host.Say after its turn has ended.
var errTurnOver = errors.New("actors: the turn is over")

// turn is the agent.Host of one running turn.
type turn struct {
	a      *Activation
	number int
	mu     sync.Mutex
	step   int
	over   bool
}

// runTurn runs one claimed message start to end on its own goroutine and
// then releases the inbox for the next message. The end of a cancelled
// turn is written through to the store on this goroutine before the
// inbox is released: whoever cancelled it (a teardown, an interrupt)
// waits for it to be durable, and the next turn, if any, waits behind it.
func (a *Activation) runTurn(claim *inbox.Claim) {
	defer a.inbox.EndTurn()
	a.lastTurn++
	t := &turn{a: a, number: a.lastTurn}
	a.append("turn/start", turnStartJSON(t.number, claim.Message.Source))
	a.append("user/message", claim.Message, session.Surface())
	reason := t.run(claim)
	t.finish()
	if reason.Error != nil {
		// As the original's loop, which counts a step before running it: the
		// failure belongs to the step after the last one the turn logged.
		reason.Error.Step = t.step + 1
	}
	end := turnEndJSON(t.number, reason)
	if _, cancelled := claim.Cause(); cancelled { // as reasonOf decides
		a.appendThrough("turn/end", end)
	} else {
		a.append("turn/end", end)
	}
}

// run calls the agent with the claimed message, turning a panic into an
// error reason (or, in a cancelled turn, the aborted one).
func (t *turn) run(claim *inbox.Claim) (reason endReason) {
	defer func() {
		if r := recover(); r != nil {
			t.a.logger.Error("actors: turn panicked", "agent", t.a.id, "turn", t.number, "panic", r)
			reason = errorReason(fmt.Sprintf("panic: %v", r), panicCode(r))
			if cause, cancelled := claim.Cause(); cancelled {
				reason = abortedReason(cause)
			}
		}
	}()
	stop, err := t.a.agent.RunTurn(claim.Context(), t, claim.Message)
	return reasonOf(claim, stop, err)
}

// reasonOf maps what the agent returned to the turn/end reason. As in the
// seed-era loop, whose settle funnel lets interruption beat error and which
// checks its abort signal once more before turn/end, a cancelled turn ends
// aborted (or disposed) whatever the agent reports. The cause is the
// claim's, read without the turn context's lock.
func reasonOf(claim *inbox.Claim, stop agent.StopReason, err error) endReason {
	cause, cancelled := claim.Cause()
	switch {
	case cancelled || stop == agent.Aborted:
		return abortedReason(cause)
	case stop == agent.Completed && err == nil:
		return endReason{Kind: "completed"}
	case err != nil:
		return errorReason(err.Error(), codeOf(err))
	case stop == agent.MaxTokens:
		return endReason{Kind: "max-tokens"}
	case stop == agent.Refusal:
		return endReason{Kind: "refusal"}
	default: // agent.Error without an error, or an unknown reason
		return errorReason(fmt.Sprintf("turn ended with stop reason %q", stop), "")
	}
}

// abortedReason is the seed-era turn/end reason of a cancelled turn:
// {kind:"disposed"} when the agent is being disposed, else exactly
// {kind:"aborted"} (also for a turn the agent reported aborted without
// being cancelled, whose cause is the zero one). The seed-era harness
// refuses to resume a log whose aborted reason carries an inner cause;
// later versions read both shapes.
func abortedReason(cause agent.CancelCause) endReason {
	if cause.Kind == agent.CauseDisposed {
		return endReason{Kind: "disposed"}
	}
	return endReason{Kind: "aborted"}
}

// nonNilContent logs absent content as [], the array the original requires.
func nonNilContent(content []agent.Block) []agent.Block {
	if content == nil {
		return []agent.Block{}
	}
	return content
}

// errorReason is an error reason; its step is set when the turn ends.
func errorReason(message, code string) endReason {
	return endReason{Kind: "error", Error: &failure{Message: message, Code: code}}
}

// codeOf is err's ErrorCode() when some error in its chain has one, else
// "": the seed-era loop writes a code only for a HarnessError.
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

// finish marks the turn over: later Host calls fail.
func (t *turn) finish() {
	t.mu.Lock()
	t.over = true
	t.mu.Unlock()
}

// SessionID is the agent's id.
func (t *turn) SessionID() string { return t.a.id }

// Subagents is the capability bound to this agent, or nil.
func (t *turn) Subagents() agent.Subagents {
	if t.a.subagents == nil {
		return nil
	}
	return t.a.subagents()
}

// Say logs one step holding one assistant message: step/start,
// assistant/message, step/end. It fails once ctx is done or the turn is
// over, and when the session refuses the append.
func (t *turn) Say(ctx context.Context, content []agent.Block) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over {
		return errTurnOver
	}
	t.step++
	mark := stepJSON(t.number, t.step)
	message := assistantMessage{Role: "assistant", Content: nonNilContent(content), Source: t.a.source, ID: inbox.NewMessageID()}
	return errors.Join(
		t.a.append("step/start", mark),
		t.a.append("assistant/message", assistantEvent{Turn: t.number, Step: t.step, Message: message}, session.Surface()),
		t.a.append("step/end", mark),
	)
}

// append logs one event; a refused append is logged and returned.
func (a *Activation) append(typ string, data any, opts ...session.AppendOption) error {
	_, err := a.live.Append(typ, data, opts...)
	return a.logged(typ, err)
}

// appendThrough logs one event and writes it through (Live.AppendThrough).
func (a *Activation) appendThrough(typ string, data any) error {
	_, err := a.live.AppendThrough(typ, data)
	return a.logged(typ, err)
}

// logged logs a refused or failed append and returns err.
func (a *Activation) logged(typ string, err error) error {
	if err != nil {
		a.logger.Error("actors: session append failed", "agent", a.id, "type", typ, "err", err)
	}
	return err
}
