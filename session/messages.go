package session

import (
	"bytes"
	"strconv"
)

// Message events (user/message, assistant/message, tool/result and the
// seed era's steering/message) are checked on every read, as the original
// store's inspect and load do (snapshotStoredEvents): pre-identity shapes
// are first upgraded in memory (never written back), then each message
// must have a non-empty string id, the right role, a source with a
// non-empty kind and a content array; an assistant message needs a model
// source with provider and model, a tool result a tool source whose callId
// matches its single tool-result block.

// messageTypes are the event types that carry a message.
var messageTypes = map[string]bool{
	"user/message": true, "assistant/message": true, "tool/result": true, "steering/message": true,
}

// checkMessages upgrades the legacy message events of a stored log in
// place and validates every message event, returning the first failure as
// the original words it.
func checkMessages(id string, events []Event, path string) error {
	ids := map[int64]string{} // seq → message id of the validated events so far
	for i := range events {
		e := &events[i]
		if !messageTypes[e.Type] {
			continue
		}
		if upgraded, ok := upgradeLegacyMessage(id, *e, ids); ok {
			e.Data = upgraded
		}
		msg, problem := checkMessageShape(e.Type, e.Data)
		if problem != "" {
			return corruptf(path, 0, `stored session "%s" failed validation: session event at seq %d %s`, id, e.Seq, problem)
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
	fields, isObject := objectMembers(e.Data)
	if !isObject {
		return nil, false
	}
	has := func(key string) bool { _, ok := member(fields, key); return ok }
	get := func(key string) []byte { v, _ := member(fields, key); return v }
	legacyID := legacyMessageID(sessionID, e.Seq)
	switch e.Type {
	case "user/message":
		if has("id") || has("role") || has("message") || !has("content") || !has("source") {
			return nil, false
		}
		b := &objectBuilder{}
		return b.members(fields).str("id", legacyID).str("role", "user").done(), true
	case "assistant/message":
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
	case "tool/result":
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
	case "steering/message":
		if has("message") || !has("content") || !has("source") {
			return nil, false
		}
		message := (&objectBuilder{}).str("id", legacyID).str("role", "user").
			raw("content", get("content")).raw("source", get("source")).done()
		return (&objectBuilder{}).members(without(fields, "content", "source")).raw("message", message).done(), true
	}
	return nil, false
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
func checkMessageShape(typ string, data []byte) (id string, problem string) {
	msgRaw := data
	if typ != "user/message" {
		fields, isObject := objectMembers(data)
		if !isObject {
			return "", "lacks an identified message"
		}
		msgRaw, _ = member(fields, "message")
	}
	msg, isObject := objectMembers(msgRaw)
	idRaw, _ := member(msg, "id")
	id, isString := decodeString(idRaw)
	if !isObject || !isString || id == "" {
		return "", "lacks an identified message"
	}
	role := "user"
	if typ == "assistant/message" {
		role = "assistant"
	}
	if raw, _ := member(msg, "role"); string(raw) != `"`+role+`"` {
		if s, ok := decodeString(raw); !ok || s != role {
			return "", `message must have role "` + role + `"`
		}
	}
	sourceRaw, _ := member(msg, "source")
	source, sourceIsObject := objectMembers(sourceRaw)
	kind := stringMember(source, "kind")
	if !sourceIsObject || kind == "" {
		return "", "message has invalid source"
	}
	contentRaw, _ := member(msg, "content")
	if len(contentRaw) == 0 || contentRaw[0] != '[' {
		return "", "message has invalid content"
	}
	switch typ {
	case "assistant/message":
		if kind != "model" || stringMember(source, "provider") == "" || stringMember(source, "model") == "" {
			return "", "message must have model source"
		}
	case "tool/result":
		return id, checkToolResultBlock(source, kind, contentRaw)
	}
	return id, ""
}

// stringMember is the string value of key, or "" when absent or not a
// string.
func stringMember(members []rawMember, key string) string {
	raw, _ := member(members, key)
	s, _ := decodeString(raw)
	return s
}

func checkToolResultBlock(source []rawMember, kind string, content []byte) string {
	callID := stringMember(source, "callId")
	if kind != "tool" || callID == "" {
		return "message must have tool source"
	}
	var blocks [][]byte
	forEachElement(content, func(v []byte) { blocks = append(blocks, v) })
	if len(blocks) != 1 {
		return "message must contain one tool-result block"
	}
	block, isObject := objectMembers(blocks[0])
	inner, _ := member(block, "content")
	if !isObject || stringMember(block, "type") != "tool-result" || len(inner) == 0 || inner[0] != '[' {
		return "message must contain one tool-result block"
	}
	toolCallID, _ := member(block, "toolCallId")
	if id, ok := decodeString(toolCallID); !ok || id != callID {
		return "message has mismatched tool call ids"
	}
	return ""
}
