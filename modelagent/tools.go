package modelagent

import (
	"context"
	"errors"
	"fmt"
	"slices"

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

// delegationParams are the parameters of subagent and subagent_fork
// (run_in_background starting a task with background tasks enabled).
func delegationParams(fork, tasks bool) []param {
	prompt := "The whole task, self-contained: the subagent sees nothing of this conversation."
	if fork {
		prompt = "Only what is new: the subagent already sees this conversation's finished turns."
	}
	background := "Start a long-lived background subagent and return its subagent id; it reports " +
		"nothing back, send it more work with send_message."
	if tasks {
		background = taskBackgroundParam
	}
	return []param{
		{Name: "description", Type: typeString, Required: true,
			Description: "A 3-5 word label for the task, shown to users."},
		{Name: "prompt", Type: typeString, Required: true, Description: prompt},
		{Name: "run_in_background", Type: typeBoolean, Description: background},
	}
}

// caller is what the tools need of the calling agent: the subagent
// service, the exact live agent, its delegation cap and the background
// tasks (nil unless enabled).
type caller struct {
	service  *subagent.Service
	self     *parent.Handle
	maxDepth int
	tasks    *tasks
}

// subagentTools are the four tools bound to the calling agent.
func subagentTools(c caller) []toolDef {
	return []toolDef{
		builtin(ToolListAgents, listDescription, nil, c.listAgents),
		builtin(toolSendMessage, sendDescription, []param{
			{Name: "subagent_id", Type: typeString, Required: true,
				Description: "The subagent id you got when you started the background subagent."},
			{Name: "message", Type: typeString, Required: true, Description: "The text to deliver."},
		}, c.sendMessage),
		builtin(toolSubagent, spawnDescription+c.backgroundSentence(), delegationParams(false, c.tasks != nil),
			func(ctx context.Context, args toolArgs) (string, error) {
				return c.delegate(ctx, subagent.SpawnName, args)
			}),
		builtin(toolSubagentFork, forkDescription+c.backgroundSentence(), delegationParams(true, c.tasks != nil),
			func(ctx context.Context, args toolArgs) (string, error) {
				return c.delegate(ctx, subagent.ForkName, args)
			}),
	}
}

// backgroundSentence tells the model what run_in_background does.
func (c caller) backgroundSentence() string {
	if c.tasks != nil {
		return taskBackgroundSentence
	}
	return backgroundSentence
}

// errNoCaller is the tools' failure without a calling agent.
func errNoCaller(tool string) error {
	return fmt.Errorf("%s requires a calling agent (exec.agent was undefined)", tool)
}

// delegate runs subagent or subagent_fork: a continuable background child
// ("started subagent <id>"), with background tasks a one-shot background
// task ("started background subagent task <id>"), or a one-shot
// foreground run whose output it returns.
func (c caller) delegate(ctx context.Context, provider string, args toolArgs) (string, error) {
	if c.self == nil {
		return "", errNoCaller("subagent tool")
	}
	maxDepth := c.maxDepth
	prompt := event.Text(args.String("prompt"))
	if args.Bool("run_in_background") && c.tasks != nil {
		return c.backgroundTask(provider, args.String("description"),
			subagent.StartRequest{Prompt: prompt, Parent: c.self, MaxDepth: &maxDepth})
	}
	if args.Bool("run_in_background") {
		started, err := c.service.StartContinuable(ctx, manager.StartSpec{
			Provider: provider, Label: args.String("description"),
			Request: manager.Request{Prompt: prompt, Parent: c.self, MaxDepth: &maxDepth},
		})
		if err != nil {
			return "", subagentError(err)
		}
		return "started subagent " + started.ChildID, nil
	}
	return c.foreground(ctx, provider, subagent.StartRequest{Prompt: prompt, Parent: c.self, MaxDepth: &maxDepth})
}

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
	if failure := RunFailure(result.StopReason); failure != "" {
		return "", errors.New(failure)
	}
	return event.TextOf(result.Output), nil
}

// RunFailure is the model-facing failure of a foreground subagent run
// that ended with stop, as the subagent tools word it ("" when it
// completed). It does not block.
func RunFailure(stop agent.StopReason) string {
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
