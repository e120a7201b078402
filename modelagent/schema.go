package modelagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// The parameter types a tool may declare.
const (
	typeString  = "string"
	typeBoolean = "boolean"
)

// param is one parameter of a tool: a property of its arguments object.
type param struct {
	Name        string
	Type        string // typeString or typeBoolean
	Description string
	Required    bool
}

// parametersJSON is the JSON Schema the model is sent for params:
// {"type":"object","properties":{name:{type, description}},"required":[…]}
// with properties in declaration order and required absent when empty.
func parametersJSON(params []param) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(p.Name))
		b.WriteString(`:{"type":`)
		b.Write(jsonString(p.Type))
		if p.Description != "" {
			b.WriteString(`,"description":`)
			b.Write(jsonString(p.Description))
		}
		b.WriteByte('}')
		if p.Required {
			required = append(required, p.Name)
		}
	}
	b.WriteByte('}')
	if len(required) > 0 {
		b.WriteString(`,"required":[`)
		for i, name := range required {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(jsonString(name))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// jsonString is s as a JSON string, without HTML escaping.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string: cannot fail
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

// toolArgs are a call's validated arguments: the parsed JSON object.
type toolArgs map[string]any

// String is the string argument name ("" when absent).
func (a toolArgs) String(name string) string {
	s, _ := a[name].(string)
	return s
}

// Bool is the boolean argument name (false when absent).
func (a toolArgs) Bool(name string) bool {
	b, _ := a[name].(bool)
	return b
}

// parseArguments reads a call's raw arguments as the original's loop does:
// "" is {}, valid JSON is its value, anything else stays the raw string.
func parseArguments(raw string) any {
	if raw == "" {
		return map[string]any{}
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return raw
	}
	return v
}

// argsError is the original's ToolArgsError: the arguments violate the
// tool's parameters. Its message lists every violation.
type argsError struct{ Violations []string }

// Error is "invalid arguments: <v1>; <v2>".
func (e *argsError) Error() string { return "invalid arguments: " + strings.Join(e.Violations, "; ") }

// ErrorName is the original's class name.
func (e *argsError) ErrorName() string { return "ToolArgsError" }

// ErrorCode is INVALID_ARGS.
func (e *argsError) ErrorCode() string { return "INVALID_ARGS" }

// validate checks parsed arguments against params: an object, the
// required properties present, each declared property of its type.
func validate(params []param, v any) (toolArgs, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &argsError{[]string{`"arguments" must be an object`}}
	}
	var violations []string
	for _, p := range params {
		if _, present := obj[p.Name]; p.Required && !present {
			violations = append(violations, `missing required property "`+p.Name+`"`)
		}
	}
	for _, p := range params {
		value, present := obj[p.Name]
		if present && !hasType(value, p.Type) {
			violations = append(violations, `"`+p.Name+`" must be a `+p.Type)
		}
	}
	if len(violations) > 0 {
		return nil, &argsError{violations}
	}
	return toolArgs(obj), nil
}

func hasType(v any, typ string) bool {
	switch typ {
	case typeString:
		_, ok := v.(string)
		return ok
	case typeBoolean:
		_, ok := v.(bool)
		return ok
	}
	return false
}

// errUnknownType rejects a tool declaring a parameter type validate does
// not check.
var errUnknownType = errors.New("modelagent: a parameter's type must be string or boolean")
