package session

import (
	"bytes"
	"strconv"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Message events (user/message, assistant/message, tool/result and the
// older steering/message) are checked on every read, as the original
// store's inspect and load do (snapshotStoredEvents): pre-identity shapes
// are first upgraded in memory (never written back), then each message
// must have a non-empty string id, the right role, a source with a
// non-empty kind and a content array; an assistant message needs a model
// source with provider and model, a tool result a tool source whose callId
// matches its single tool-result block.

// checkMessages upgrades the legacy message events of a stored log in
// place and validates every message event, returning the first failure as
// the original words it, with the events before the refused one as the
// readable prefix (ReadablePrefix).
func checkMessages(id string, events []Event, path string) error {
	ids := map[int64]string{} // seq → message id of the validated events so far
	for i := range events {
		e := &events[i]
		if !vocab.OnSurface(e.Type) { // the event types that carry a message
			continue
		}
		if upgraded, ok := upgradeLegacyMessage(id, *e, ids); ok {
			e.Data = upgraded
		}
		msg, problem := checkMessageShape(e.Type, e.Data)
		if problem != "" {
			refused := corruptf(path, 0, `stored session "%s" failed validation: session event at seq %d %s`, id, e.Seq, problem)
			return withReadable(refused, events[:i:i])
		}
		ids[e.Seq] = msg
	}
	return nil
}

// rawMember is one member of a JSON object, in document order.
type rawMember struct{ key, value []byte }

// objectMembers returns the members of raw when it is a JSON object (not
// an array), in order; a repeated key keeps its last value, as JSON.parse
// does, at the position of its first occurrence.
func objectMembers(raw []byte) ([]rawMember, bool) {
	var members []rawMember
	object, valid := forEachMember(raw, func(key, value []byte) {
		for i := range members {
			if bytes.Equal(members[i].key, key) {
				members[i].value = value
				return
			}
		}
		members = append(members, rawMember{key, value})
	})
	return members, object && valid
}

func member(members []rawMember, key string) ([]byte, bool) {
	for _, m := range members {
		if string(m.key) == key {
			return m.value, true
		}
	}
	return nil, false
}

// without returns members minus the given keys.
func without(members []rawMember, keys ...string) []rawMember {
	out := make([]rawMember, 0, len(members))
	for _, m := range members {
		drop := false
		for _, k := range keys {
			drop = drop || string(m.key) == k
		}
		if !drop {
			out = append(out, m)
		}
	}
	return out
}

// objectBuilder writes a JSON object member by member.
type objectBuilder struct{ buf []byte }

func (b *objectBuilder) raw(key string, value []byte) *objectBuilder {
	if len(b.buf) == 0 {
		b.buf = append(b.buf, '{')
	} else {
		b.buf = append(b.buf, ',')
	}
	b.buf = appendJSONString(b.buf, key)
	b.buf = append(b.buf, ':')
	b.buf = append(b.buf, value...)
	return b
}

func (b *objectBuilder) str(key, value string) *objectBuilder {
	return b.raw(key, appendJSONString(nil, value))
}

func (b *objectBuilder) members(ms []rawMember) *objectBuilder {
	for _, m := range ms {
		b.raw(string(m.key), m.value)
	}
	return b
}

func (b *objectBuilder) done() []byte {
	if len(b.buf) == 0 {
		return []byte("{}")
	}
	return append(b.buf, '}')
}

// legacyMessageID is the stable id the original gives a message persisted
// before message identities existed.
func legacyMessageID(sessionID string, seq int64) string {
	return "legacy-message:" + sessionID + ":" + strconv.FormatInt(seq, 10)
}

// upgradeLegacyMessage converts one pre-identity message event into the
// current shape, as the original's migrateLegacyMessageEvent does; ok is
// false when the event is not in a legacy shape (current-looking malformed
// events are left for validation to reject).
func upgradeLegacyMessage(sessionID string, e Event, ids map[int64]string) (data []byte, ok bool) {
	if !isLegacyMessage(e.Type, e.Data) {
		return nil, false
	}
	fields, _ := objectMembers(e.Data)
	has := func(key string) bool { _, ok := member(fields, key); return ok }
	get := func(key string) []byte { v, _ := member(fields, key); return v }
	legacyID := legacyMessageID(sessionID, e.Seq)
	switch e.Type {
	case vocab.TypeUserMessage:
		if has("id") || has("role") || has("message") || !has("content") || !has("source") {
			return nil, false
		}
		b := &objectBuilder{}
		return b.members(fields).str("id", legacyID).str("role", "user").done(), true
	case vocab.TypeAssistantMessage:
		if has("message") || !has("content") || !has("provenance") {
			return nil, false
		}
		source := &objectBuilder{}
		provenance, _ := objectMembers(get("provenance"))
		if _, hasKind := member(provenance, "kind"); hasKind {
			for _, m := range provenance {
				if string(m.key) == "kind" {
					source.str("kind", "model")
				} else {
					source.members([]rawMember{m})
				}
			}
		} else {
			source.members(provenance).str("kind", "model")
		}
		message := (&objectBuilder{}).str("id", legacyID).str("role", "assistant").
			raw("content", get("content")).raw("source", source.done()).done()
		return (&objectBuilder{}).members(without(fields, "content", "provenance")).raw("message", message).done(), true
	case vocab.TypeToolResult:
		if has("message") || !has("callId") || !has("content") || !has("isError") {
			return nil, false
		}
		callID := get("callId")
		block := (&objectBuilder{}).str("type", "tool-result").raw("toolCallId", callID).
			raw("content", get("content")).raw("isError", get("isError")).done()
		message := &objectBuilder{}
		if start, replaces := replacementStart(e.SurfaceOp); !replaces {
			message.str("id", legacyID)
		} else if inherited, found := ids[start]; found {
			message.str("id", inherited)
		} // else: no id, and validation refuses the event
		message.str("role", "user").raw("content", append(append([]byte{'['}, block...), ']')).
			raw("source", (&objectBuilder{}).str("kind", "tool").raw("callId", callID).done())
		return (&objectBuilder{}).members(without(fields, "callId", "content", "isError")).raw("message", message.done()).done(), true
	case vocab.TypeSteeringMessage:
		if has("message") || !has("content") || !has("source") {
			return nil, false
		}
		message := (&objectBuilder{}).str("id", legacyID).str("role", "user").
			raw("content", get("content")).raw("source", get("source")).done()
		return (&objectBuilder{}).members(without(fields, "content", "source")).raw("message", message).done(), true
	}
	return nil, false
}

// isLegacyMessage reports, without allocating, whether data is the
// pre-identity shape of a typ event.
func isLegacyMessage(typ string, data []byte) bool {
	var seen struct{ id, role, message, content, source, provenance, callID, isError bool }
	object, valid := forEachMember(data, func(key, _ []byte) {
		switch string(key) {
		case "id":
			seen.id = true
		case "role":
			seen.role = true
		case "message":
			seen.message = true
		case "content":
			seen.content = true
		case "source":
			seen.source = true
		case "provenance":
			seen.provenance = true
		case "callId":
			seen.callID = true
		case "isError":
			seen.isError = true
		}
	})
	if !object || !valid || seen.message || !seen.content {
		return false
	}
	switch typ {
	case vocab.TypeUserMessage:
		return !seen.id && !seen.role && seen.source
	case vocab.TypeAssistantMessage:
		return seen.provenance
	case vocab.TypeToolResult:
		return seen.callID && seen.isError
	case vocab.TypeSteeringMessage:
		return seen.source
	}
	return false
}

// replacementStart is the start seq of a replace surfaceOp, if it is one
// with a numeric start.
func replacementStart(surfaceOp []byte) (int64, bool) {
	op, isObject := objectMembers(surfaceOp)
	if !isObject {
		return 0, false
	}
	kind, _ := member(op, "op")
	start, _ := member(op, "start")
	if string(kind) != `"replace"` || !isJSONNumber(start) {
		return 0, false
	}
	n, _, ok := parseSafeInt(start)
	if !ok {
		return -1, true // a fractional start matches no message
	}
	return n, true
}

// checkMessageShape validates one message event (the original's
// assertMessageEventShape) and returns its message id, or the problem.
// It walks the raw bytes once per object, without allocating.
func checkMessageShape(typ string, data []byte) (id string, problem string) {
	msgRaw := data
	if typ != vocab.TypeUserMessage {
		m, object, valid := pickMembers(data, [4]string{"message"})
		if msgRaw = m[0]; !object || !valid {
			return "", "lacks an identified message"
		}
	}
	m, object, valid := pickMembers(msgRaw, [4]string{"id", "role", "source", "content"})
	idRaw, roleRaw, sourceRaw, contentRaw := m[0], m[1], m[2], m[3]
	id, isString := decodeString(idRaw)
	if !object || !valid || !isString || id == "" {
		return "", "lacks an identified message"
	}
	role := "user"
	if typ == vocab.TypeAssistantMessage {
		role = "assistant"
	}
	if r, ok := decodeString(roleRaw); !ok || r != role {
		return "", `message must have role "` + role + `"`
	}
	m, object, valid = pickMembers(sourceRaw, [4]string{"kind", "provider", "model", "callId"})
	kindRaw, providerRaw, modelRaw, callIDRaw := m[0], m[1], m[2], m[3]
	kind, _ := decodeString(kindRaw)
	if !object || !valid || kind == "" {
		return "", "message has invalid source"
	}
	if len(contentRaw) == 0 || contentRaw[0] != '[' {
		return "", "message has invalid content"
	}
	switch typ {
	case vocab.TypeAssistantMessage:
		provider, _ := decodeString(providerRaw)
		model, _ := decodeString(modelRaw)
		if kind != "model" || provider == "" || model == "" {
			return "", "message must have model source"
		}
	case vocab.TypeToolResult:
		callID, _ := decodeString(callIDRaw)
		return id, checkToolResultBlock(kind, callID, contentRaw)
	}
	return id, ""
}

// pickMembers returns the raw values of raw's members named by keys (the
// last of a repeated key; nil when absent or for an unused "" slot) and
// whether raw is an object and valid JSON. It does not allocate.
func pickMembers(raw []byte, keys [4]string) (values [4][]byte, object, valid bool) {
	object, valid = forEachMember(raw, func(key, value []byte) {
		for i, k := range keys {
			if k != "" && string(key) == k {
				values[i] = value
				return
			}
		}
	})
	return values, object, valid
}

func checkToolResultBlock(kind, callID string, content []byte) string {
	if kind != "tool" || callID == "" {
		return "message must have tool source"
	}
	blocks, first := 0, []byte(nil)
	forEachElement(content, func(v []byte) {
		if blocks == 0 {
			first = v
		}
		blocks++
	})
	if blocks != 1 {
		return "message must contain one tool-result block"
	}
	m, object, valid := pickMembers(first, [4]string{"type", "content", "toolCallId"})
	typeRaw, innerRaw, toolCallIDRaw := m[0], m[1], m[2]
	if blockType, _ := decodeString(typeRaw); !object || !valid || blockType != "tool-result" ||
		len(innerRaw) == 0 || innerRaw[0] != '[' {
		return "message must contain one tool-result block"
	}
	if toolCallID, ok := decodeString(toolCallIDRaw); !ok || toolCallID != callID {
		return "message has mismatched tool call ids"
	}
	return ""
}
