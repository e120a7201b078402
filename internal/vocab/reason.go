package vocab

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// Reason is a turn/end reason. Its shapes, by kind:
//
//	{kind}                                   completed, max-tokens, refusal, disposed,
//	                                         interrupted, blocked, and aborted without a cause
//	{kind:"aborted", reason:{kind, reason?}} aborted with its cause (later versions)
//	{kind:"error", step, message, code?}     a turn failed by a thrown error
//	{kind:"error", step, failure}            a turn failed by the model (Failure set)
//	{kind:"error", error}                    later versions' failure (Error set)
//
// Reading accepts every shape; writing gives back the shape read.
type Reason struct {
	Kind string
	// Cause is an aborted reason's inner {kind, reason?}, nil when absent.
	Cause *Cause
	// Step is an error reason's step (the step the failure belongs to).
	Step int
	// Message and Code are a thrown error's text and code ("" when it has
	// none); used when Failure and Error are nil.
	Message string
	Code    string
	// Failure is a model failure; Error is later versions' failure.
	Failure *Failure
	Error   *Failure
}

// Cause says who cancelled an aborted turn: {kind, reason?}.
type Cause struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
}

// Text is the failure's message of an error reason, whichever shape it
// has, and "" for any other reason.
func (r Reason) Text() string {
	switch {
	case r.Failure != nil:
		return r.Failure.Message
	case r.Error != nil:
		return r.Error.Message
	}
	return r.Message
}

// ErrorCode is the failure's code of an error reason, whichever shape it
// has ("" when it has none).
func (r Reason) ErrorCode() string {
	switch {
	case r.Failure != nil:
		return r.Failure.Code
	case r.Error != nil:
		return r.Error.Code
	}
	return r.Code
}

// reasonWire is a reason with every member any shape has, in the order
// they are written.
type reasonWire struct {
	Kind    string   `json:"kind"`
	Cause   *Cause   `json:"reason,omitempty"`
	Step    *int     `json:"step,omitempty"`
	Message *string  `json:"message,omitempty"`
	Code    string   `json:"code,omitempty"`
	Failure *Failure `json:"failure,omitempty"`
	Error   *Failure `json:"error,omitempty"`
}

// MarshalJSON writes the reason's shape with the original's key order; a
// plain kind (lower-case letters and dashes) alone is written without
// reflection, as most turns end.
func (r Reason) MarshalJSON() ([]byte, error) {
	if r.Kind == "" {
		return nil, errors.New("event: a turn/end reason needs a kind")
	}
	if b, ok := r.appendPlain(nil); ok {
		return b, nil
	}
	return r.marshalWire()
}

// appendPlain appends, without reflection, a reason that is a plain kind
// alone, or a plain kind with a cause that is a plain kind alone (a
// cancelled turn's {"kind":"aborted","reason":{"kind":"parent"}}), and
// reports whether r was one.
func (r Reason) appendPlain(b []byte) ([]byte, bool) {
	if r.Kind == ReasonError || !plainKind(r.Kind) {
		return b, false
	}
	if r.Cause == nil {
		return append(append(append(b, `{"kind":"`...), r.Kind...), `"}`...), true
	}
	if r.Error != nil || r.Cause.Reason != "" || !plainKind(r.Cause.Kind) {
		return b, false
	}
	b = append(append(append(b, `{"kind":"`...), r.Kind...), `","reason":{"kind":"`...)
	return append(append(b, r.Cause.Kind...), `"}}`...), true
}

// marshalWire writes any reason through its wire shape.
func (r Reason) marshalWire() ([]byte, error) {
	w := reasonWire{Kind: r.Kind, Cause: r.Cause}
	if r.Kind == ReasonError && r.Error == nil {
		step := r.Step
		w.Step = &step
		if r.Failure != nil {
			w.Failure = r.Failure
		} else {
			message := r.Message
			w.Message, w.Code = &message, r.Code
		}
	} else {
		w.Error = r.Error
	}
	return jsjson.Marshal(w)
}

// UnmarshalJSON reads any reason shape; a reason that is not an object
// with a string kind is an error.
func (r *Reason) UnmarshalJSON(data []byte) error {
	var w reasonWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Kind == "" {
		return errors.New("event: a turn/end reason needs a kind")
	}
	*r = Reason{Kind: w.Kind, Cause: w.Cause, Code: w.Code, Failure: w.Failure, Error: w.Error}
	if w.Step != nil {
		r.Step = *w.Step
	}
	if w.Message != nil {
		r.Message = *w.Message
	}
	return nil
}

// plainKind reports whether kind needs no escaping in JSON.
func plainKind(kind string) bool {
	for i := 0; i < len(kind); i++ {
		if c := kind[i]; (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return true
}

// appendTurn appends {"turn":N to b.
func appendTurn(b []byte, turn int) []byte {
	return strconv.AppendInt(append(b, `{"turn":`...), int64(turn), 10)
}

// MarshalJSON writes {turn, reason}, without reflection for a plain reason.
func (e TurnEnd) MarshalJSON() ([]byte, error) {
	if e.Reason.Kind != "" {
		b := append(appendTurn(make([]byte, 0, 96), e.Turn), `,"reason":`...)
		if b, ok := e.Reason.appendPlain(b); ok {
			return append(b, '}'), nil
		}
	}
	reason, err := e.Reason.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := appendTurn(make([]byte, 0, 24+len(reason)), e.Turn)
	b = append(append(b, `,"reason":`...), reason...)
	return append(b, '}'), nil
}

// MarshalJSON writes {turn, step} without reflection.
func (s Step) MarshalJSON() ([]byte, error) {
	b := appendTurn(make([]byte, 0, 48), s.Turn)
	b = strconv.AppendInt(append(b, `,"step":`...), int64(s.Step), 10)
	return append(b, '}'), nil
}

// MarshalJSON writes {turn, step, chunk}, without reflection for a delta
// chunk whose strings are valid UTF-8.
func (c AssistantChunk) MarshalJSON() ([]byte, error) {
	b := appendTurn(make([]byte, 0, 96+len(c.Chunk.Text)+len(c.Chunk.ArgumentsDelta)), c.Turn)
	b = strconv.AppendInt(append(b, `,"step":`...), int64(c.Step), 10)
	b = append(b, `,"chunk":`...)
	if delta, ok := c.Chunk.appendDelta(b); ok {
		return append(delta, '}'), nil
	}
	type plain AssistantChunk
	return jsjson.Marshal(plain(c))
}

// MarshalJSON writes {turn, trigger?}, without reflection when the trigger
// is a message from a source with a plain kind alone.
func (s TurnStart) MarshalJSON() ([]byte, error) {
	t := s.Trigger
	if t == nil || t.Kind != TriggerMessage || t.Source == nil || *t.Source != (event.Source{Kind: t.Source.Kind}) ||
		!plainKind(t.Source.Kind) {
		type plain TurnStart
		return jsjson.Marshal(plain(s))
	}
	b := appendTurn(make([]byte, 0, 80+len(t.Source.Kind)), s.Turn)
	b = append(append(b, `,"trigger":{"kind":"message","source":{"kind":"`...), t.Source.Kind...)
	return append(b, `"}}}`...), nil
}
