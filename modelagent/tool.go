package modelagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dsh-actors/dsh-actors/fault"
)

// Tool is a tool of the embedder's own, offered to every model agent next
// to the built-in ones (the agent's tool filter applies to it as to them).
type Tool struct {
	// Name is the model-facing name: [A-Za-z0-9_-]{1,64}, not a built-in
	// tool's name and not starting with "mcp__" (the MCP servers' tools).
	Name string
	// Description tells the model what the tool does.
	Description string
	// Parameters is the JSON Schema of the arguments object (nil: an
	// object with no declared properties). Objects, arrays, numbers,
	// integers, enums and nesting are validated before Run is called; a
	// violation is answered "Error: invalid arguments: …".
	Parameters json.RawMessage
	// ConcurrencySafe lets consecutive calls of concurrency-safe tools run
	// at once; any other call runs alone.
	ConcurrencySafe bool
	// Run executes one call and returns the text the model reads back. It
	// is called on its own goroutine and must honour ctx. An error is
	// answered "Error: <message>"; one carrying a code (a *fault.Error, or
	// a type with ErrorCode and optionally ErrorName) is logged with its
	// {name, code}. A panic is a failed call.
	Run func(ctx context.Context, call ToolCall) (string, error)
}

// ToolCall is one call of a Tool: who calls it and with what.
type ToolCall struct {
	// SessionID is the calling agent's id (its session's).
	SessionID string
	// Arguments is the validated arguments object, as JSON.
	Arguments json.RawMessage
}

// toolName is what a model-facing tool name may be.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// mcpPrefix starts the names of the MCP servers' tools.
const mcpPrefix = "mcp__"

// emptyParameters is a Tool's parameters when it declares none.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// compileTools checks the embedder's tools and compiles their parameters:
// a bad name, a clash with a built-in or delegation tool or another of
// them, or
// parameters that are not an object JSON Schema is an error naming it.
func compileTools(tools []Tool, delegations map[string]string) ([]toolDef, error) {
	taken := builtinNames()
	for name := range delegations {
		taken[name] = true
	}
	defs := make([]toolDef, 0, len(tools))
	for _, t := range tools {
		def, err := compileTool(t, taken)
		if err != nil {
			return nil, err
		}
		taken[t.Name] = true
		defs = append(defs, def)
	}
	return defs, nil
}

func compileTool(t Tool, taken map[string]bool) (toolDef, error) {
	switch {
	case !toolName.MatchString(t.Name):
		return toolDef{}, fmt.Errorf("modelagent: tool name %q must match [A-Za-z0-9_-]{1,64}", t.Name)
	case strings.HasPrefix(t.Name, mcpPrefix):
		return toolDef{}, fmt.Errorf("modelagent: tool name %q: the %q prefix is the MCP servers' own", t.Name, mcpPrefix)
	case taken[t.Name]:
		return toolDef{}, fmt.Errorf("modelagent: tool name %q is already taken", t.Name)
	case t.Run == nil:
		return toolDef{}, fmt.Errorf("modelagent: tool %q has no Run", t.Name)
	}
	params := t.Parameters
	if len(params) == 0 {
		params = emptyParameters
	}
	compact, err := compactRaw(params)
	if err != nil {
		return toolDef{}, fmt.Errorf("modelagent: tool %q: parameters: %w", t.Name, err)
	}
	schema, err := compileSchema(compact)
	if err != nil {
		return toolDef{}, fmt.Errorf("modelagent: tool %q: parameters: %w", t.Name, err)
	}
	return toolDef{Name: t.Name, Description: t.Description, Parameters: compact, schema: schema,
		ConcurrencySafe: t.ConcurrencySafe, custom: t.Run}, nil
}

// compactRaw is raw without insignificant whitespace (the request header
// logs it as one line).
func compactRaw(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// bind is the tool bound to its caller: Run gets the caller's identity
// and the arguments as JSON.
func (t toolDef) bind(sessionID string) toolDef {
	run := t.custom
	t.Run = func(ctx context.Context, args toolArgs) (string, error) {
		raw, err := json.Marshal(map[string]any(args))
		if err != nil {
			return "", err
		}
		text, err := run(ctx, ToolCall{SessionID: sessionID, Arguments: raw})
		return text, coded(err)
	}
	return t
}

// codedError is a *fault.Error a tool returned, logged as a
// {name:"HarnessError", code}.
type codedError struct{ err *fault.Error }

func (e codedError) Error() string     { return e.err.Error() }
func (e codedError) Unwrap() error     { return e.err }
func (e codedError) ErrorName() string { return "HarnessError" }
func (e codedError) ErrorCode() string { return string(e.err.Code) }

// namedCode is an error with a code and no name of its own, logged with
// the name "Error".
type namedCode struct {
	err  error
	code string
}

func (e namedCode) Error() string     { return e.err.Error() }
func (e namedCode) Unwrap() error     { return e.err }
func (e namedCode) ErrorName() string { return "Error" }
func (e namedCode) ErrorCode() string { return e.code }

// coded keeps the code of a tool's error in the log: an error naming
// itself stays, a *fault.Error is a HarnessError, one with only a code is
// an Error; any other error is logged without {name, code}.
func coded(err error) error {
	if err == nil {
		return nil
	}
	var named interface {
		ErrorName() string
		ErrorCode() string
	}
	if errors.As(err, &named) {
		return err
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return codedError{fe}
	}
	var withCode interface{ ErrorCode() string }
	if errors.As(err, &withCode) && withCode.ErrorCode() != "" {
		return namedCode{err, withCode.ErrorCode()}
	}
	return err
}
