package descriptor

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/dsh-actors/dsh-actors/event"
)

// allowedKeys is the version-1 key set.
var allowedKeys = map[string]bool{
	"version": true, "provider": true, "label": true,
	"agentProvider": true, "agentModel": true, "persona": true, "toolFilter": true,
}

// optionalStrings are checked, in this order, after provider and label.
var optionalStrings = []string{"agentProvider", "agentModel", "persona"}

// Parse validates one persisted payload and returns a freshly rebuilt
// record. It applies the rules below in order and stops at the first
// failure:
//
//  1. not an object → "payload must be an object";
//  2. version not a number → "version must be a number";
//  3. version not 1 → a fault.DescriptorUnsupported error (not corrupt);
//  4. a key outside the version-1 set → `payload has unknown field "<key>"`;
//  5. provider, then label, not a string → "<key> must be a string";
//  6. agentProvider, agentModel, persona present but not a string;
//  7. toolFilter present: not an object, an unknown key, allow or deny not
//     an array of strings, or neither declared.
//
// Every fault.DescriptorCorrupt message is prefixed "persisted subagent descriptor ".
// Parse never panics, whatever the input.
func Parse(raw json.RawMessage) (Data, error) {
	keys, fields, ok := decodeObject(raw)
	if !ok {
		return Data{}, corrupt("payload must be an object")
	}
	if err := checkVersion(fields["version"]); err != nil {
		return Data{}, err
	}
	if key, found := firstUnknown(keys, allowedKeys); found {
		return Data{}, corrupt(`payload has unknown field "` + key + `"`)
	}
	return rebuild(fields)
}

func checkVersion(raw json.RawMessage) error {
	if !isNumber(raw) {
		return corrupt("version must be a number")
	}
	text := string(bytes.TrimSpace(raw))
	// An out-of-range number is a number too (JavaScript reads it as
	// ±Infinity or 0); it is simply not version 1.
	if v, _ := strconv.ParseFloat(text, 64); v != version {
		return unsupported(text)
	}
	return nil
}

func rebuild(fields map[string]json.RawMessage) (Data, error) {
	d := Data{Version: version}
	var ok bool
	if d.Provider, ok = stringField(fields, "provider"); !ok {
		return Data{}, corrupt("provider must be a string")
	}
	if d.Label, ok = stringField(fields, "label"); !ok {
		return Data{}, corrupt("label must be a string")
	}
	optional := []*string{&d.AgentProvider, &d.AgentModel, &d.Persona}
	for i, key := range optionalStrings {
		if _, present := fields[key]; !present {
			continue
		}
		if *optional[i], ok = stringField(fields, key); !ok {
			return Data{}, corrupt(key + " must be a string")
		}
	}
	if raw, present := fields["toolFilter"]; present {
		tf, err := parseToolFilter(raw)
		if err != nil {
			return Data{}, err
		}
		d.ToolFilter = tf
	}
	return d, nil
}

func parseToolFilter(raw json.RawMessage) (*event.ToolFilter, error) {
	keys, fields, ok := decodeObject(raw)
	if !ok {
		return nil, corrupt("toolFilter must be an object")
	}
	if key, found := firstUnknown(keys, map[string]bool{"allow": true, "deny": true}); found {
		return nil, corrupt(`toolFilter has unknown field "` + key + `"`)
	}
	tf := &event.ToolFilter{}
	lists := []*[]string{&tf.Allow, &tf.Deny}
	for i, key := range []string{"allow", "deny"} {
		raw, present := fields[key]
		if !present {
			continue
		}
		if *lists[i], ok = stringArray(raw); !ok {
			return nil, corrupt("toolFilter." + key + " must be an array of strings")
		}
	}
	if tf.Allow == nil && tf.Deny == nil {
		return nil, corrupt("toolFilter must declare allow and/or deny")
	}
	return tf, nil
}

// stringField decodes fields[key] as a JSON string; a missing key is not one.
func stringField(fields map[string]json.RawMessage, key string) (string, bool) {
	raw, present := fields[key]
	if !present || !startsWith(raw, '"') {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// stringArray decodes raw as an array of strings; an empty array gives a
// non-nil empty slice.
func stringArray(raw json.RawMessage) ([]string, bool) {
	if !startsWith(raw, '[') {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		var s string
		if !startsWith(item, '"') || json.Unmarshal(item, &s) != nil {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func firstUnknown(keys []string, allowed map[string]bool) (string, bool) {
	for _, key := range keys {
		if !allowed[key] {
			return key, true
		}
	}
	return "", false
}

func isNumber(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9'))
}

func startsWith(raw json.RawMessage, c byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == c
}
