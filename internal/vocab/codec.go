package vocab

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/jsjson"
)

// ErrUnknownType is returned by Decode for an event type this package has
// no payload for (subagent/descriptor's is the descriptor package's).
var ErrUnknownType = errors.New("event: no payload for this event type")

// Owned is JSON text handed over with its bytes: a session's Append takes
// it as it takes a json.RawMessage, but keeps these very bytes rather than
// a copy when they are compact already. Encode's result, used for nothing
// else, can be handed over so.
type Owned []byte

// Encode writes p as compact JSON the way JSON.stringify would: keys in the
// payload struct's order, no HTML escaping. Write it under p.EventType().
func Encode(p Payload) (json.RawMessage, error) {
	if p == nil {
		return nil, errors.New("event: nil payload")
	}
	var raw []byte
	var err error
	if m, ok := p.(json.Marshaler); ok { // hand-written: compact and unescaped already
		raw, err = m.MarshalJSON()
	} else {
		raw, err = jsjson.Marshal(p)
	}
	if err != nil {
		return nil, fmt.Errorf("event: encode %s: %w", p.EventType(), err)
	}
	return raw, nil
}

// Decode reads the data of an event of type typ into its payload struct
// (the value, not a pointer: UserMessage, TurnEnd, Step, …). A type without
// a payload here is ErrUnknownType; data that is not that payload's shape
// is an error naming the type.
func Decode(typ string, data []byte) (Payload, error) {
	p, err := decode(typ, data)
	if err != nil && !errors.Is(err, ErrUnknownType) {
		return nil, fmt.Errorf("event: decode %s: %w", typ, err)
	}
	return p, err
}

func decode(typ string, data []byte) (Payload, error) {
	switch typ {
	case TypeUserMessage:
		return into[event.UserMessage](data)
	case TypeSteeringMessage:
		return into[SteeringMessage](data)
	case TypeTurnStart:
		return into[TurnStart](data)
	case TypeTurnEnd:
		return into[TurnEnd](data)
	case TypeStepStart, TypeStepEnd:
		s, err := into[Step](data)
		s.Kind = typ
		return s, err
	case TypeAssistantMessage:
		return into[AssistantMessage](data)
	case TypeAssistantChunk:
		return into[AssistantChunk](data)
	case TypeToolCall:
		return into[ToolCall](data)
	case TypeToolResult:
		return into[ToolResult](data)
	case TypeRequestHeader:
		return into[RequestHeader](data)
	case TypeRequestContext:
		return into[RequestContext](data)
	case TypeLLMRetry:
		return into[LLMRetry](data)
	case TypeSessionEndSeed:
		return into[SessionEndSeed](data)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownType, typ)
}

// DecodeAs is Decode for a caller that knows the payload type it wants:
// data that decodes to another payload (or typ's payload is not a T) is an
// error.
func DecodeAs[T Payload](typ string, data []byte) (T, error) {
	var zero T
	p, err := Decode(typ, data)
	if err != nil {
		return zero, err
	}
	t, ok := p.(T)
	if !ok {
		return zero, fmt.Errorf("event: %s does not hold a %T", typ, zero)
	}
	return t, nil
}

// into decodes data, which must be a JSON object, into a T.
func into[T any](data []byte) (T, error) {
	var v T
	if d := bytes.TrimSpace(data); len(d) == 0 || d[0] != '{' {
		return v, errors.New("the payload is not a JSON object")
	}
	err := json.Unmarshal(data, &v)
	return v, err
}
