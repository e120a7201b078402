package modelagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// toolDef is one model-facing tool.
type toolDef struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object, as the model
	// is sent it; schema is it compiled (nil until the registry compiles
	// it).
	Parameters json.RawMessage
	schema     *jsonschema.Schema
	// ConcurrencySafe lets consecutive calls of such tools run at once (up
	// to maxParallel); any other call is a barrier that runs alone.
	ConcurrencySafe bool
	// Run executes one call with validated arguments and returns the text
	// the model reads back. An error becomes the result "Error: <message>"
	// (isError), logged with {name, code} when it is a typed error.
	Run func(ctx context.Context, args toolArgs) (string, error)
	// custom is the Run of an embedder's Tool, which bind wraps.
	custom func(ctx context.Context, call ToolCall) (string, error)
}

// builtin is a built-in tool with parameters params.
func builtin(name, description string, params []param, run func(context.Context, toolArgs) (string, error)) toolDef {
	return toolDef{Name: name, Description: description, Parameters: parametersJSON(params), Run: run}
}

// maxParallel bounds the concurrency-safe calls running at once.
const maxParallel = 10

// registry is a set of tools by name, offered to the model in the order
// they were given.
type registry struct {
	tools []toolDef
}

// compiled caches the built-in tools' compiled parameters by their JSON:
// the registry is built for every turn.
var compiled sync.Map // string -> *jsonschema.Schema

// newRegistry returns a registry of tools, compiling the parameters of
// those that come without their schema; a duplicate name or parameters
// that do not compile is an error.
func newRegistry(tools ...toolDef) (*registry, error) {
	seen := map[string]bool{}
	out := slices.Clone(tools)
	for i, t := range out {
		if seen[t.Name] {
			return nil, fmt.Errorf("modelagent: duplicate tool %q", t.Name)
		}
		seen[t.Name] = true
		if t.schema != nil {
			continue
		}
		if cached, ok := compiled.Load(string(t.Parameters)); ok {
			out[i].schema = cached.(*jsonschema.Schema)
			continue
		}
		schema, err := compileSchema(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("modelagent: tool %q: parameters: %w", t.Name, err)
		}
		compiled.Store(string(t.Parameters), schema)
		out[i].schema = schema
	}
	return &registry{tools: out}, nil
}

// specs are the tools as the request header and the model see them.
func (r *registry) specs() []vocab.ToolSpec {
	specs := make([]vocab.ToolSpec, len(r.tools))
	for i, t := range r.tools {
		specs[i] = vocab.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return specs
}

func (r *registry) get(name string) (toolDef, bool) {
	for _, t := range r.tools {
		if t.Name == name {
			return t, true
		}
	}
	return toolDef{}, false
}

// The registry's own typed failures.
type toolError struct {
	name, code, message string
}

func (e *toolError) Error() string     { return e.message }
func (e *toolError) ErrorName() string { return e.name }
func (e *toolError) ErrorCode() string { return e.code }

func unknownTool(name string) error {
	return &toolError{"ToolNotFoundError", "UNKNOWN_TOOL", `unknown tool "` + name + `"`}
}

var (
	errAborted               = &toolError{"AbortError", "ABORTED", "tool call aborted"}
	errAbortedBeforeDispatch = &toolError{"AbortError", "ABORTED_BEFORE_DISPATCH", "tool call aborted before dispatch"}
)

// callLog is where a step's calls and results are logged.
type callLog interface {
	ToolCall(ctx context.Context, call event.ToolCallBlock) error
	ToolResult(ctx context.Context, result agent.ToolResult) (string, error)
}

// execute runs one call: "aborted before dispatch" when ctx is already
// done, else the lookup, the argument validation and the tool body. A
// cancellation the body did not fail on replaces its success with
// "tool call aborted".
func (r *registry) execute(ctx context.Context, call event.ToolCallBlock) agent.ToolResult {
	if ctx.Err() != nil {
		return errorResult(call.ID, errAbortedBeforeDispatch)
	}
	tool, ok := r.get(call.Name)
	if !ok {
		return errorResult(call.ID, unknownTool(call.Name))
	}
	args, err := validate(tool.schema, parseArguments(call.Arguments))
	if err != nil {
		return errorResult(call.ID, err)
	}
	text, err := runBody(ctx, tool, args)
	switch {
	case err != nil:
		return errorResult(call.ID, err)
	case ctx.Err() != nil:
		return errorResult(call.ID, errAborted)
	}
	return agent.ToolResult{CallID: call.ID, Content: event.Text(text)}
}

// runBody calls the tool, turning a panic into an error.
func runBody(ctx context.Context, tool toolDef, args toolArgs) (text string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %q panicked: %v", tool.Name, p)
		}
	}()
	return tool.Run(ctx, args)
}

// errorResult is "Error: <message>" with isError, and {name, code} when
// err is typed (it has ErrorName and ErrorCode).
func errorResult(callID string, err error) agent.ToolResult {
	result := agent.ToolResult{CallID: callID, Content: event.Text("Error: " + err.Error()), IsError: true}
	var typed interface {
		ErrorName() string
		ErrorCode() string
	}
	if errors.As(err, &typed) {
		result.Error = &event.ToolFailure{Name: typed.ErrorName(), Code: typed.ErrorCode()}
	}
	return result
}

// run executes a step's calls in model order and logs them: a barrier
// call alone (tool/call, then its tool/result), a run of consecutive
// concurrency-safe calls in a pool (each tool/call as it starts, results
// in model order). Once ctx is done no call starts: every call not started
// is logged with the "aborted before dispatch" result. Logging uses ctx
// without its cancellation, so that a cancelled step still records what
// happened; a logging failure stops the run and is returned.
func (r *registry) run(ctx context.Context, calls []event.ToolCallBlock, log callLog) error {
	logCtx := context.WithoutCancel(ctx)
	for next := 0; next < len(calls); {
		if ctx.Err() != nil {
			return r.skip(logCtx, calls[next:], log)
		}
		group := r.group(calls[next:])
		if err := r.runGroup(ctx, logCtx, group, log); err != nil {
			return err
		}
		next += len(group)
	}
	return nil
}

// group is the calls that run together from the front of calls: one
// barrier call, or every consecutive concurrency-safe one.
func (r *registry) group(calls []event.ToolCallBlock) []event.ToolCallBlock {
	n := 0
	for _, c := range calls {
		if tool, ok := r.get(c.Name); !ok || !tool.ConcurrencySafe {
			break
		}
		n++
	}
	return calls[:max(n, 1)]
}

// runGroup runs up to maxParallel calls of group at once, logging each
// call as it starts and the results in model order; once ctx is done the
// calls not yet started are skipped.
func (r *registry) runGroup(ctx, logCtx context.Context, group []event.ToolCallBlock, log callLog) error {
	results := make([]chan agent.ToolResult, len(group))
	var wg sync.WaitGroup
	defer wg.Wait()
	started, slots := 0, make(chan struct{}, maxParallel)
	start := func() error {
		for started < len(group) && ctx.Err() == nil && len(slots) < cap(slots) {
			call := group[started]
			if err := log.ToolCall(logCtx, call); err != nil {
				return err
			}
			slots <- struct{}{}
			results[started] = make(chan agent.ToolResult, 1)
			wg.Add(1)
			go func(out chan<- agent.ToolResult) {
				defer wg.Done()
				out <- r.execute(ctx, call)
				<-slots
			}(results[started])
			started++
		}
		return nil
	}
	for done := 0; done < len(group); done++ {
		if err := start(); err != nil {
			return err
		}
		if done == started { // cancelled before this call started
			return r.skip(logCtx, group[done:], log)
		}
		if _, err := log.ToolResult(logCtx, <-results[done]); err != nil {
			return err
		}
	}
	return nil
}

// skip logs each call with the "aborted before dispatch" result.
func (r *registry) skip(logCtx context.Context, calls []event.ToolCallBlock, log callLog) error {
	for _, call := range calls {
		if err := log.ToolCall(logCtx, call); err != nil {
			return err
		}
		if _, err := log.ToolResult(logCtx, errorResult(call.ID, errAbortedBeforeDispatch)); err != nil {
			return err
		}
	}
	return nil
}
