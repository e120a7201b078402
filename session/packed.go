package session

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Packed chunk rows: the original harness's writer may store a
// run of assistant/chunk delta events as one text-chunks, reasoning-chunks
// or tool-call-chunks row. Reading expands them back to the exact events;
// this package never writes them (reading is layout-blind).

var rowTags = map[string]bool{"text-chunks": true, "reasoning-chunks": true, "tool-call-chunks": true}

// rowData holds the raw members of a packed row's data object.
type rowData struct {
	turn, step, index, dt, payload, id, name []byte
	keys                                     int
	payloadKey                               string
}

func (d *rowData) member(key, value []byte) {
	d.keys++
	switch string(key) {
	case "turn":
		d.turn = value
	case "step":
		d.step = value
	case "index":
		d.index = value
	case "dt":
		d.dt = value
	case d.payloadKey:
		d.payload = value
	case "id":
		d.id = value
	case "name":
		d.name = value
	}
}

// valid checks the exact key set and member types of the row's data.
func (d *rowData) valid(tool bool) bool {
	want := 5
	if tool {
		want = 6
		if d.name != nil {
			want = 7
		}
		if !isJSONString(d.id) || (d.name != nil && !isJSONString(d.name)) {
			return false
		}
	} else if d.id != nil || d.name != nil {
		return false
	}
	return d.keys == want && isJSONNumber(d.turn) && isJSONNumber(d.step) && isJSONNumber(d.index) &&
		d.dt != nil && d.payload != nil
}

func isJSONString(raw []byte) bool { return len(raw) > 0 && raw[0] == '"' }

func isJSONNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || isDigit(raw[0]))
}

func decodeRow(env *envelope, dst []Event) ([]Event, error) {
	tool := env.typ == "tool-call-chunks"
	d := rowData{payloadKey: "texts"}
	if tool {
		d.payloadKey = "args"
	}
	if env.keys != 4 || env.seq0 == nil || env.time0 == nil || !env.hasData {
		return dst, errUnparsable
	}
	if object, _ := forEachMember(env.data, d.member); !object || !d.valid(tool) {
		return dst, errUnparsable
	}
	seq0, _, ok1 := parseSafeInt(env.seq0)
	time0, _, ok2 := parseSafeInt(env.time0)
	members, ok3 := stringElements(d.payload)
	gaps, ok4 := parseIntArray(d.dt)
	if !ok1 || !ok2 || !ok3 || !ok4 || seq0 < 0 || len(members) == 0 || len(gaps) != len(members)-1 ||
		seq0+int64(len(members))-1 > maxSafeInteger {
		return dst, errUnparsable
	}
	t := time0
	for k, member := range members {
		if k > 0 {
			t += gaps[k-1]
			if t > maxSafeInteger || t < -maxSafeInteger {
				return dst, errUnparsable
			}
		}
		dst = append(dst, Event{
			Type: vocab.TypeAssistantChunk,
			Seq:  seq0 + int64(k),
			Time: t,
			Data: chunkData(env.typ, &d, member),
		})
	}
	return dst, nil
}

// chunkData rebuilds {turn, step, chunk} for one member, in the key order
// the original's expandRow produces.
func chunkData(tag string, d *rowData, member []byte) json.RawMessage {
	buf := make([]byte, 0, 96+len(member)+len(d.id)+len(d.name))
	buf = append(buf, `{"turn":`...)
	buf = append(buf, d.turn...)
	buf = append(buf, `,"step":`...)
	buf = append(buf, d.step...)
	switch tag {
	case "text-chunks":
		buf = append(buf, `,"chunk":{"type":"text-delta","index":`...)
	case "reasoning-chunks":
		buf = append(buf, `,"chunk":{"type":"reasoning-delta","index":`...)
	default:
		buf = append(buf, `,"chunk":{"type":"tool-call-delta","index":`...)
	}
	buf = append(buf, d.index...)
	if tag == "tool-call-chunks" {
		buf = append(append(buf, `,"id":`...), d.id...)
		if d.name != nil {
			buf = append(append(buf, `,"name":`...), d.name...)
		}
		buf = append(append(buf, `,"argumentsDelta":`...), member...)
	} else {
		buf = append(append(buf, `,"text":`...), member...)
	}
	return append(buf, '}', '}')
}

// stringElements returns the raw string elements of a JSON array, false if
// it is not an array of strings.
func stringElements(raw []byte) ([][]byte, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var out [][]byte
	ok := true
	forEachElement(raw, func(v []byte) {
		ok = ok && isJSONString(v)
		out = append(out, v)
	})
	return out, ok
}
