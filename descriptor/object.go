package descriptor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
)

// decodeObject reads raw as a JSON object. It returns the keys in the order
// a JavaScript object built by JSON.parse enumerates them (array-index keys
// ascending, then the other keys in first-appearance order) and the fields,
// a repeated key keeping its last value. ok is false for any other value or
// for invalid JSON.
func decodeObject(raw json.RawMessage) (keys []string, fields map[string]json.RawMessage, ok bool) {
	if !startsWith(raw, '{') || json.Unmarshal(raw, &fields) != nil {
		return nil, nil, false
	}
	order, ok := keyOrder(raw)
	if !ok {
		return nil, nil, false
	}
	return jsOrder(order), fields, true
}

// keyOrder lists the object's keys in document order, each once.
func keyOrder(raw json.RawMessage) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, false
	}
	seen := map[string]bool{}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, false
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	return keys, true
}

// jsOrder moves array-index keys ("0", "7", "42"; canonical integers below
// 2^32-1) to the front in ascending numeric order, as JavaScript does.
func jsOrder(keys []string) []string {
	var indexes, others []string
	for _, key := range keys {
		if isArrayIndex(key) {
			indexes = append(indexes, key)
		} else {
			others = append(others, key)
		}
	}
	slices.SortFunc(indexes, func(a, b string) int {
		x, _ := strconv.ParseUint(a, 10, 32)
		y, _ := strconv.ParseUint(b, 10, 32)
		return cmp.Compare(x, y)
	})
	return append(indexes, others...)
}

func isArrayIndex(key string) bool {
	n, err := strconv.ParseUint(key, 10, 32)
	return err == nil && n < 1<<32-1 && strconv.FormatUint(n, 10) == key
}
