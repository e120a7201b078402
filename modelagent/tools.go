package modelagent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/fault"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// The model-facing names of the subagent tools.
const (
	toolSubagent     = "subagent"
	toolSubagentFork = "subagent_fork"
	toolSendMessage  = "send_message"
	ToolListAgents   = "list_agents"
)

// Tool descriptions: what each tool does, in this project's words.
const (
	spawnDescription = "Hand a self-contained task to a subagent: a separate agent with its own, empty " +
		"history. You get back only its final answer, never its intermediate steps, so use it for focused, " +
		"independent work you want kept out of this conversation. The subagent cannot see this " +
		"conversation: the prompt must contain everything it needs."
	forkDescription = "Hand a task to a subagent that starts from a copy of this conversation's finished " +
		"turns (not the turn in progress). You get back only its final answer. Use it for work that builds " +
		"on what was already said here."
	backgroundSentence = " Set `run_in_background: true` to start a long-lived subagent that keeps its " +
		"history: you get its subagent id back at once and it reports nothing back to you; give it more " +
		"work later with `send_message`."
	sendDescription = "Queue a message as the next turn of one of your background subagents, in the same " +
		"conversation. A subagent that is busy sees it only after its current turn, so it cannot change " +
		"work already in progress. You get no answer back; an error means the message was not delivered."
	listDescription = "List your background subagents with their durable ids and labels. running means " +
		"the subagent is active in this process; complete means it exists only on disk, and a " +
		"`send_message` would open a new turn for it. A listing does not promise delivery. A subagent " +
		"whose log cannot be read is listed as a diagnostic row instead of being left out."
)

// delegationParams are the parameters of a delegation tool: its prompt
// worded for a child that sees the parent's finished turns (inherits) or
// not, run_in_background for a continuable child or a one-shot task.
func delegationParams(inherits, continuable bool) []param {
	prompt := "The whole task, self-contained: the subagent sees nothing of this conversation."
	if inherits {
		prompt = "Only what is new: the subagent already sees this conversation's finished turns."
	}
	background := taskBackgroundParam
	if continuable {
		background = "Start a long-lived background subagent and return its subagent id; it reports " +
			"nothing back, send it more work with send_message."
	}
	return []param{
		{Name: "description", Type: typeString, Required: true,
			Description: "A 3-5 word label for the task, shown to users."},
		{Name: "prompt", Type: typeString, Required: true, Description: prompt},
		{Name: "run_in_background", Type: typeBoolean, Description: background},
	}
}

// binding is one mount of the delegation tool: the tool's name, the
// provider it starts children through, and what of that provider the
// tool's wording and requests follow.
type binding struct {
	tool, provider string
	// inherits: the child sees the parent's finished turns.
	inherits bool
	// continuable: run_in_background starts a continuable child; else a
	// one-shot background task.
	continuable bool
	// depthLimit: the provider enforces the delegation cap, which is then
	// sent; else the cap is the provider's own business.
	depthLimit bool
}

// builtinBindings are subagent over spawn and subagent_fork over fork;
// with background tasks their background runs are one-shot tasks.
func builtinBindings(tasks bool) []binding {
	return []binding{
		{tool: toolSubagent, provider: subagent.SpawnName, continuable: !tasks, depthLimit: true},
		{tool: toolSubagentFork, provider: subagent.ForkName, inherits: true, continuable: !tasks, depthLimit: true},
	}
}

// bindingOf is the binding of tool to the registered provider p: the
// wording follows whether p's children inherit the parent's context, the
// background mode is continuable only when p can prepare continuable
// children and background tasks are off, and the cap is sent only when p
// enforces it.
func bindingOf(tool string, p subagent.Provider, tasks bool) binding {
	_, preparer := p.(subagent.ContinuablePreparer)
	return binding{tool: tool, provider: p.Name(), inherits: p.InheritsParentContext(),
		continuable: preparer && !tasks, depthLimit: p.Capabilities().DepthLimit}
}

// caller is what the tools need of the calling agent: the subagent
// service, the exact live agent, its delegation cap, the background
// tasks (nil unless enabled) and the delegation tools' bindings.
type caller struct {
	service  *subagent.Service
	self     *parent.Handle
	maxDepth int
	tasks    *tasks
	bindings []binding
}

// subagentTools are list_agents, send_message and a delegation tool per
// binding, bound to the calling agent.
func subagentTools(c caller) []toolDef {
	tools := []toolDef{
		builtin(ToolListAgents, listDescription, nil, c.listAgents),
		builtin(toolSendMessage, sendDescription, []param{
			{Name: "subagent_id", Type: typeString, Required: true,
				Description: "The subagent id you got when you started the background subagent."},
			{Name: "message", Type: typeString, Required: true, Description: "The text to deliver."},
		}, c.sendMessage),
	}
	for _, b := range c.bindings {
		tools = append(tools, builtin(b.tool, b.description(), delegationParams(b.inherits, b.continuable),
			func(ctx context.Context, args toolArgs) (string, error) { return c.delegate(ctx, b, args) }))
	}
	return tools
}

// description is the delegation tool's description for b.
func (b binding) description() string {
	description := spawnDescription
	if b.inherits {
		description = forkDescription
	}
	if b.continuable {
		return description + backgroundSentence
	}
	return description + taskBackgroundSentence
}

// errNoCaller is the tools' failure without a calling agent.
func errNoCaller(tool string) error {
	return fmt.Errorf("%s requires a calling agent (exec.agent was undefined)", tool)
}

// delegate runs one call of b's tool: with run_in_background a
// continuable child ("started subagent <id>") or a one-shot background
// task ("started background subagent task <id>"), else a one-shot
// foreground run whose output it returns.
func (c caller) delegate(ctx context.Context, b binding, args toolArgs) (string, error) {
	if c.self == nil {
		return "", errNoCaller("subagent tool")
	}
	var maxDepth *int
	if b.depthLimit {
		maxDepth = &c.maxDepth
	}
	prompt := event.Text(args.String("prompt"))
	switch {
	case !args.Bool("run_in_background"):
		return c.foreground(ctx, b.provider, subagent.StartRequest{Prompt: prompt, Parent: c.self, MaxDepth: maxDepth})
	case b.continuable:
		started, err := c.service.StartContinuable(ctx, manager.StartSpec{
			Provider: b.provider, Label: args.String("description"),
			Request: manager.Request{Prompt: prompt, Parent: c.self, MaxDepth: maxDepth},
		})
		if err != nil {
			return "", subagentError(err)
		}
		return "started subagent " + started.ChildID, nil
	case c.tasks == nil:
		return "", errNoTasks
	}
	return c.backgroundTask(b.provider, args.String("description"),
		subagent.StartRequest{Prompt: prompt, Parent: c.self, MaxDepth: maxDepth})
}

// errNoTasks refuses a one-shot background run without background tasks.
var errNoTasks = errors.New("background tasks unavailable: load @deepseek-ai/dsh-tasks and @deepseek-ai/dsh-tool-tasks")

// foreground starts a one-shot child, waits for its result and disposes
// it; a dispose failure wins over the result.
func (c caller) foreground(ctx context.Context, provider string, req subagent.StartRequest) (text string, err error) {
	run, err := c.service.Start(ctx, provider, req)
	if err != nil {
		return "", subagentError(err)
	}
	defer func() {
		if disposeErr := run.Dispose(context.WithoutCancel(ctx)); disposeErr != nil {
			text, err = "", subagentError(disposeErr)
		}
	}()
	result, err := run.Result(ctx)
	if err != nil {
		return "", subagentError(err)
	}
	if failure := runFailure(result.StopReason); failure != "" {
		return "", errors.New(failure)
	}
	return event.TextOf(result.Output), nil
}

// runFailure is the model-facing failure of a foreground subagent run
// that ended with stop, as the subagent tools word it ("" when it
// completed). It does not block.
func runFailure(stop agent.StopReason) string {
	switch stop {
	case agent.Completed:
		return ""
	case agent.Aborted:
		return "subagent run was cancelled"
	case agent.Error:
		return "subagent run failed"
	case agent.MaxTokens:
		return "subagent run hit its token limit before finishing"
	case agent.Refusal:
		return "subagent declined the task"
	}
	return fmt.Sprintf("subagent run ended abnormally (%s)", stop)
}

// sendMessage queues the message as the child's next turn.
func (c caller) sendMessage(ctx context.Context, args toolArgs) (string, error) {
	if c.self == nil {
		return "", errNoCaller(toolSendMessage)
	}
	id := args.String("subagent_id")
	source := event.Source{Kind: event.SourceCoordinator, SenderSessionID: c.self.ID()}
	if _, err := c.service.Followup(ctx, c.self, id, event.Text(args.String("message")), source); err != nil {
		return "", subagentError(err)
	}
	return "message queued as the next turn for subagent " + id, nil
}

// listAgents renders the caller's children as the catalog lists them.
func (c caller) listAgents(ctx context.Context, _ toolArgs) (string, error) {
	if c.self == nil {
		return "", errNoCaller(ToolListAgents)
	}
	entries, err := c.service.ListChildren(ctx, c.self.ID())
	if err != nil {
		return "", subagentError(err)
	}
	return query.RenderListAgents(entries), nil
}

// namedSubagentError is a subagent service failure as the original's
// SubagentError is logged: {name:"SubagentError", code}.
type namedSubagentError struct{ err *fault.Error }

func (e namedSubagentError) Error() string     { return e.err.Error() }
func (e namedSubagentError) Unwrap() error     { return e.err }
func (e namedSubagentError) ErrorName() string { return "SubagentError" }
func (e namedSubagentError) ErrorCode() string { return string(e.err.Code) }

// subagentCodes are the codes a SubagentError carries.
var subagentCodes = []fault.Code{
	fault.DuplicateProvider, fault.NoProvider, fault.UnsupportedCapability, fault.ContinuationUnavailable,
	fault.PersistenceUnavailable, fault.Draining, fault.Unauthorized, fault.ActivationClosing, fault.NotResumable,
	fault.ActivationTeardownFailed, fault.DurabilityFailed, fault.SessionQueryUnavailable, fault.Cancelled,
}

// subagentError names a subagent service failure; any other error (the
// depth cap's among them) stays as it is, logged without a name and code.
func subagentError(err error) error {
	var se *fault.Error
	if errors.As(err, &se) && slices.Contains(subagentCodes, se.Code) {
		return namedSubagentError{se}
	}
	return err
}

// builtinNames are the names of the built-in tools.
func builtinNames() map[string]bool {
	taken := map[string]bool{}
	for _, t := range append(subagentTools(caller{bindings: builtinBindings(false)}), taskTools(caller{})...) {
		taken[t.Name] = true
	}
	return taken
}

// checkDelegations refuses a delegation whose tool name is not a tool name
// or is taken by another built-in tool (subagent and subagent_fork may be
// rebound), or whose provider name is empty.
func checkDelegations(delegations map[string]string) error {
	taken := builtinNames()
	delete(taken, toolSubagent)
	delete(taken, toolSubagentFork)
	for tool, provider := range delegations {
		switch {
		case !toolName.MatchString(tool) || strings.HasPrefix(tool, mcpPrefix):
			return fmt.Errorf("modelagent: delegation tool name %q must match [A-Za-z0-9_-]{1,64} without the %q prefix", tool, mcpPrefix)
		case taken[tool]:
			return fmt.Errorf("modelagent: delegation tool name %q is a built-in tool's", tool)
		case provider == "":
			return fmt.Errorf("modelagent: delegation tool %q names no provider", tool)
		}
	}
	return nil
}

// bindings are the delegation tools as service's providers stand now: the
// built-in ones, then Config.Delegations in tool-name order, each only
// while its provider is registered (without a service, only the built-in
// ones that no delegation rebinds).
func (a *Agents) bindings(service *subagent.Service) []binding {
	bindings := builtinBindings(a.tasks != nil)
	for _, tool := range slices.Sorted(maps.Keys(a.cfg.Delegations)) {
		i := slices.IndexFunc(bindings, func(b binding) bool { return b.tool == tool })
		var p subagent.Provider
		if service != nil {
			p = service.GetProvider(a.cfg.Delegations[tool])
		}
		switch {
		case p == nil && i >= 0:
			bindings = slices.Delete(bindings, i, i+1)
		case p == nil:
		case i >= 0:
			bindings[i] = bindingOf(tool, p, a.tasks != nil)
		default:
			bindings = append(bindings, bindingOf(tool, p, a.tasks != nil))
		}
	}
	return bindings
}
