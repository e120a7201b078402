package modelagent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The parameter types a built-in tool declares.
const (
	typeString  = "string"
	typeBoolean = "boolean"
)

// param is one parameter of a built-in tool: a property of its arguments
// object.
type param struct {
	Name        string
	Type        string // typeString or typeBoolean
	Description string
	Required    bool
}

// encodedParameters caches parametersJSON by parametersKey: the built-in
// tools are made for every turn from a few fixed parameter lists.
var encodedParameters sync.Map // string -> json.RawMessage

// parametersJSON is the JSON Schema the model is sent for params:
// {"type":"object","properties":{name:{type, description}},"required":[…]}
// with properties in declaration order and required absent when empty.
// The result is shared: do not modify it.
func parametersJSON(params []param) json.RawMessage {
	key := parametersKey(params)
	if raw, ok := encodedParameters.Load(key); ok {
		return raw.(json.RawMessage)
	}
	raw := encodeParameters(params)
	encodedParameters.Store(key, raw)
	return raw
}

// parametersKey identifies params: each field followed by a NUL, and
// whether it is required.
func parametersKey(params []param) string {
	var b strings.Builder
	for _, p := range params {
		for _, field := range []string{p.Name, p.Type, p.Description} {
			b.WriteString(field)
			b.WriteByte(0)
		}
		b.WriteString(strconv.FormatBool(p.Required))
		b.WriteByte(0)
	}
	return b.String()
}

// encodeParameters writes parametersJSON's schema.
func encodeParameters(params []param) json.RawMessage {
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
// "" is {}, valid JSON is its value (numbers kept exact), anything else
// stays the raw string.
func parseArguments(raw string) any {
	if raw == "" {
		return map[string]any{}
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
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

// schemaURL names every compiled schema: each compiler holds one.
const schemaURL = "mem://tool/parameters.json"

// errNoLoading refuses a $ref outside the schema itself: schemas are
// never fetched from files or the network.
var errNoLoading = errors.New("schemas are not loaded from outside (only $ref within the schema)")

type refuseLoading struct{}

func (refuseLoading) Load(string) (any, error) { return nil, errNoLoading }

// compileSchema compiles a JSON Schema (draft 2020-12 unless it says
// otherwise) whose root must accept objects: "type":"object" or no type.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("a schema must be a JSON object")
	}
	if t, has := obj["type"]; has && t != "object" {
		return nil, errors.New(`the root schema's "type" must be "object"`)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoading{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// validate checks parsed arguments against a tool's compiled schema: an
// object, each violation phrased as the original phrases it.
func validate(schema *jsonschema.Schema, v any) (toolArgs, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &argsError{[]string{`"arguments" must be an object`}}
	}
	err := schema.Validate(obj)
	if err == nil {
		return toolArgs(obj), nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, &argsError{[]string{err.Error()}}
	}
	return nil, &argsError{violations(ve, obj)}
}

// violations are the leaf errors of a validation error tree, missing
// properties first, undeclared ones last, the rest between, each group
// sorted by its text: the validator walks a schema's properties in map
// order, and the same arguments must always get the same answer.
func violations(ve *jsonschema.ValidationError, instance any) []string {
	type violation struct {
		rank int
		text string
	}
	var out []violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 && !branching(e.ErrorKind) {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		rank := 1
		switch e.ErrorKind.(type) {
		case *kind.Required:
			rank = 0
		case *kind.AdditionalProperties:
			rank = 2
		}
		for _, text := range phrase(e, instance) {
			out = append(out, violation{rank, text})
		}
	}
	walk(ve)
	slices.SortFunc(out, func(a, b violation) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), strings.Compare(a.text, b.text))
	})
	texts := make([]string, 0, len(out))
	for _, v := range out {
		if !slices.Contains(texts, v.text) {
			texts = append(texts, v.text)
		}
	}
	return texts
}

// branching kinds are reported as one violation, not through the failures
// of each branch they tried.
func branching(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.OneOf, *kind.AnyOf, *kind.Not:
		return true
	}
	return false
}

// printer renders the validator's own wording for the kinds phrase does
// not word itself.
var printer = message.NewPrinter(language.English)

// phrase words one leaf violation: `missing required property "a.b"`,
// `"a.b[0]" must be a string`, `"x" must be one of [...]`, `"x" is not a
// declared property (additionalProperties: false)`; other kinds as
// `"x" <the validator's wording>`.
func phrase(e *jsonschema.ValidationError, instance any) []string {
	path := instancePath(e.InstanceLocation, instance)
	at := `"` + diagnosticPath(path) + `"`
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		out := make([]string, len(k.Missing))
		for i, name := range k.Missing {
			out[i] = `missing required property "` + propertyPath(path, name) + `"`
		}
		return out
	case *kind.AdditionalProperties:
		out := make([]string, len(k.Properties))
		for i, name := range k.Properties {
			out[i] = `"` + propertyPath(path, name) + `" is not a declared property (additionalProperties: false)`
		}
		return out
	case *kind.Type:
		wants := make([]string, len(k.Want))
		for i, w := range k.Want {
			wants[i] = article(w)
		}
		return []string{at + " must be " + strings.Join(wants, " or ")}
	case *kind.Enum:
		return []string{at + " must be one of " + compactJSON(k.Want)}
	case *kind.Const:
		return []string{at + " must be " + compactJSON(k.Want)}
	case *kind.OneOf:
		return []string{fmt.Sprintf("%s must match exactly one oneOf branch (matched %d)", at, len(k.Subschemas))}
	}
	return []string{at + " " + e.ErrorKind.LocalizedString(printer)}
}

// article is a JSON type with its article: "a string", "an object".
func article(typ string) string {
	switch typ {
	case "object", "array", "integer":
		return "an " + typ
	case "null":
		return "null"
	}
	return "a " + typ
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// instancePath renders a location in the arguments: properties joined by
// dots, array indexes in brackets ("a.b[0].c"); "" is the whole object.
func instancePath(location []string, instance any) string {
	var b strings.Builder
	at := instance
	for _, token := range location {
		switch v := at.(type) {
		case []any:
			b.WriteString("[" + token + "]")
			if i, err := strconv.Atoi(token); err == nil && i >= 0 && i < len(v) {
				at = v[i]
			}
		case map[string]any:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(token)
			at = v[token]
		default:
			b.WriteString("." + token)
		}
	}
	return b.String()
}

// diagnosticPath names the whole object "arguments".
func diagnosticPath(path string) string {
	if path == "" {
		return "arguments"
	}
	return path
}

// propertyPath is the path of property key of the object at path.
func propertyPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
