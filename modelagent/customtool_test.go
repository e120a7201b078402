package modelagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/modelagent"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// orderSchema nests objects, arrays, enums, integers and numbers.
const orderSchema = `{
  "type": "object",
  "properties": {
    "customer": {"type": "object", "properties": {"name": {"type": "string"}, "tier": {"enum": ["gold", "silver"]}}, "required": ["name"]},
    "lines": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}, "price": {"type": "number"}}, "required": ["sku", "qty"], "additionalProperties": false}},
    "rush": {"type": "boolean"}
  },
  "required": ["customer", "lines"]
}`

// calls records what a custom tool was called with.
type calls struct {
	mu  sync.Mutex
	got []modelagent.ToolCall
}

func (c *calls) add(call modelagent.ToolCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, call)
}

func (c *calls) all() []modelagent.ToolCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]modelagent.ToolCall(nil), c.got...)
}

// newRigWith is newRig with cfg's tools (and the rest of cfg).
func newRigWith(t *testing.T, client llm.Client, cfg modelagent.Config) *rig {
	t.Helper()
	retry := rigRetry()
	cfg.Model, cfg.Retry = "deepseek-v4-flash", &retry
	agents, err := modelagent.NewOverChecked(cfg, client, func() float64 { return 0.5 })
	require.NoError(t, err)
	return rigOf(t, agents)
}

func TestCustomToolsValidateNestedArgumentsAndGetTheirCaller(t *testing.T) {
	var seen calls
	order := modelagent.Tool{Name: "place_order", Description: "Place an order.", Parameters: json.RawMessage(orderSchema),
		Run: func(_ context.Context, call modelagent.ToolCall) (string, error) {
			seen.add(call)
			return "order placed", nil
		}}
	client := llmtest.NewClient(
		llmtest.Reply(llmtest.CallTools(
			llmtest.Call{ID: "ok", Name: "place_order", Args: []string{`{"customer":{"name":"Ada","tier":"gold"},"lines":[{"sku":"a1","qty":2,"price":9.5}],"rush":true}`}},
			llmtest.Call{ID: "bad", Name: "place_order", Args: []string{`{"customer":{"tier":"bronze"},"lines":[{"sku":"a1","qty":1.5,"color":"red"},{"qty":0}],"rush":"yes"}`}},
		)),
		llmtest.Reply(llmtest.Say("done")),
	)
	r := newRigWith(t, client, modelagent.Config{Tools: []modelagent.Tool{order}})
	h := r.turn(t, "orders", "order")
	log := events(t, h.Session())

	header := ofType(log, "request/header")[0].Raw
	require.Contains(t, header, `{"name":"place_order","description":"Place an order.","parameters":{"type":"object","properties":{"customer":`)
	require.Equal(t, []string{"list_agents", "send_message", "subagent", "subagent_fork", "place_order"}, toolNames(client.Requests()[0].Tools))

	results := ofType(log, "tool/result")
	require.Len(t, results, 2)
	require.Contains(t, results[0].Raw, `"text":"order placed"}],"isError":false`)
	require.Contains(t, results[1].Raw, `"text":"Error: invalid arguments: `+
		`missing required property \"customer.name\"; missing required property \"lines[1].sku\"; `)
	for _, v := range []string{
		`\"customer.tier\" must be one of [\"gold\",\"silver\"]`,
		`\"lines[0].qty\" must be an integer`,
		`\"lines[1].qty\" `,
		`\"rush\" must be a boolean`,
		`\"lines[0].color\" is not a declared property (additionalProperties: false)`,
	} {
		require.Contains(t, results[1].Raw, v)
	}
	require.True(t, strings.HasSuffix(results[1].Raw, `"error":{"name":"ToolArgsError","code":"INVALID_ARGS"}}`), results[1].Raw)

	got := seen.all()
	require.Len(t, got, 1, "the invalid call never reaches Run")
	require.Equal(t, "orders", got[0].SessionID)
	require.JSONEq(t, `{"customer":{"name":"Ada","tier":"gold"},"lines":[{"sku":"a1","qty":2,"price":9.5}],"rush":true}`, string(got[0].Arguments))
}

// codedFailure is a tool error with a code and a name of its own.
type codedFailure struct{}

func (codedFailure) Error() string     { return "disk quota reached" }
func (codedFailure) ErrorName() string { return "QuotaError" }
func (codedFailure) ErrorCode() string { return "QUOTA_REACHED" }

func TestACustomToolsTypedErrorKeepsItsCodeInTheLog(t *testing.T) {
	fail := func(err error) func(context.Context, modelagent.ToolCall) (string, error) {
		return func(context.Context, modelagent.ToolCall) (string, error) { return "", err }
	}
	tools := []modelagent.Tool{
		{Name: "fault_tool", Run: fail(fault.New(fault.NotResumable, `subagent "x" is unavailable`, nil))},
		{Name: "named_tool", Run: fail(codedFailure{})},
		{Name: "plain_tool", Run: fail(errors.New("plain failure"))},
		{Name: "panicky", Run: func(context.Context, modelagent.ToolCall) (string, error) { panic("boom") }},
	}
	client := llmtest.NewClient(
		llmtest.Reply(llmtest.CallTools(
			llmtest.Call{ID: "f", Name: "fault_tool", Args: []string{`{}`}},
			llmtest.Call{ID: "n", Name: "named_tool", Args: []string{`{}`}},
			llmtest.Call{ID: "p", Name: "plain_tool", Args: []string{``}},
			llmtest.Call{ID: "x", Name: "panicky", Args: []string{`{}`}},
		)),
		llmtest.Reply(llmtest.Say("done")),
	)
	r := newRigWith(t, client, modelagent.Config{Tools: tools})
	results := ofType(events(t, r.turn(t, "typed", "go").Session()), "tool/result")
	require.Len(t, results, 4)
	require.Contains(t, results[0].Raw, `"text":"Error: subagent \"x\" is unavailable"}],"isError":true`)
	require.True(t, strings.HasSuffix(results[0].Raw, `"error":{"name":"HarnessError","code":"NOT_RESUMABLE"}}`), results[0].Raw)
	require.True(t, strings.HasSuffix(results[1].Raw, `"error":{"name":"QuotaError","code":"QUOTA_REACHED"}}`), results[1].Raw)
	require.Contains(t, results[2].Raw, `"text":"Error: plain failure"}],"isError":true`)
	require.NotContains(t, results[2].Raw, `"error":`)
	require.Contains(t, results[3].Raw, `Error: tool \"panicky\" panicked: boom`)
}

func TestABadOrTakenToolNameFailsNew(t *testing.T) {
	run := func(context.Context, modelagent.ToolCall) (string, error) { return "", nil }
	for name, tools := range map[string][]modelagent.Tool{
		`tool name "list_agents" is already taken`:   {{Name: "list_agents", Run: run}},
		`tool name "twice" is already taken`:         {{Name: "twice", Run: run}, {Name: "twice", Run: run}},
		`must match [A-Za-z0-9_-]{1,64}`:             {{Name: "has space", Run: run}},
		`the "mcp__" prefix is the MCP servers' own`: {{Name: "mcp__fs__read", Run: run}},
		`tool "norun" has no Run`:                    {{Name: "norun"}},
		`parameters: the root schema's "type" must be "object"`: {{Name: "arr", Run: run,
			Parameters: json.RawMessage(`{"type":"array"}`)}},
		`tool "badref" parameters`: {{Name: "badref", Run: run,
			Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`)}},
	} {
		_, err := modelagent.NewOverChecked(modelagent.Config{Model: "m", Tools: tools}, llmtest.NewClient(), nil)
		require.Error(t, err, name)
		require.Contains(t, strings.ReplaceAll(err.Error(), "tool \"badref\": parameters", "tool \"badref\" parameters"), name)
	}
}

func TestTheToolFilterAppliesToCustomTools(t *testing.T) {
	run := func(context.Context, modelagent.ToolCall) (string, error) { return "ran", nil }
	tools := []modelagent.Tool{{Name: "kept", Run: run}, {Name: "dropped", Run: run}}
	client := llmtest.NewClient(llmtest.Reply(llmtest.Say("child done")), llmtest.Reply(llmtest.Say("child done")))
	r := newRigWith(t, client, modelagent.Config{Tools: tools})
	for i, filter := range []*event.ToolFilter{{Allow: []string{"kept", "list_agents"}}, {Deny: []string{"dropped", "subagent"}}} {
		r.child(t, fmt.Sprintf("filter-parent-%d", i), manager.Request{Prompt: event.Text("go"), ToolFilter: filter})
	}
	reqs := client.Requests()
	require.Equal(t, []string{"list_agents", "kept"}, toolNames(reqs[0].Tools))
	require.Equal(t, []string{"list_agents", "send_message", "subagent_fork", "kept"}, toolNames(reqs[1].Tools))
}

// child starts a top-level agent parentID, has it start a continuable
// spawn child with req (its Parent set) and waits until the child is
// idle; it returns the child.
func (r *rig) child(t *testing.T, parentID string, req manager.Request) *parent.Handle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := r.rt.StartAgent(ctx, parentSpec(parentID))
	require.NoError(t, err)
	req.Parent = p
	started, err := r.service.StartContinuable(ctx, manager.StartSpec{Provider: subagent.SpawnName, Label: "child", Request: req})
	require.NoError(t, err)
	h := r.rt.Registry().Get(started.ChildID)
	require.NotNil(t, h, "the child %s is live", started.ChildID)
	require.NoError(t, h.Activation().WhenIdle(ctx), "waiting for the child %s to be idle", started.ChildID)
	return h
}
