package modelagent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// The model-facing names of the background task tools.
const (
	toolTaskOutput = "task_output"
	toolTaskList   = "task_list"
	toolTaskKill   = "task_kill"
)

// typeNumber is the parameter type of a number.
const typeNumber = "number"

// The waits of task_output: wait without timeout_ms, and the most any
// wait lasts.
const (
	taskWaitDefault = 30 * time.Second
	taskWaitCap     = 10 * time.Minute
)

// The one-shot background wording of the delegation tools.
const (
	taskBackgroundSentence = " Set `run_in_background: true` to return a task id; collect with `task_output` and stop with `task_kill`."
	taskBackgroundParam    = "Run as a background task and return its id; collect with task_output or stop with task_kill."
	taskIDDescription      = "Task id returned by the tool that started the background work."
)

// taskTools are task_output, task_list and task_kill bound to the calling
// agent c.self over its tasks.
func taskTools(c caller) []toolDef {
	return []toolDef{
		builtin(toolTaskOutput, "Read a background task. Stream tasks return only output since the previous read; "+
			"final-output tasks return their result after settlement. Every response ends with "+
			"`[status: ...]`. Reads are non-blocking unless `wait: true`, which waits up to the configured cap.",
			[]param{
				{Name: "task_id", Type: typeString, Required: true, Description: taskIDDescription},
				{Name: "wait", Type: typeBoolean, Description: "Block until the task reaches a terminal status or the timeout expires. " +
					"A timed-out wait returns [status: running] and leaves the task alive."},
				{Name: "timeout_ms", Type: typeNumber, Description: "Max wait in milliseconds (only meaningful with wait: true). " +
					"Defaults to the configured wait timeout; capped by the configured maximum."},
			}, c.taskOutput),
		builtin(toolTaskList, "List your background tasks (running and finished) with their ids, kinds, and statuses.",
			nil, c.taskList),
		builtin(toolTaskKill, "Request cancellation of a running background task by task id. "+
			"Returns immediately; the task settles as killed once its work actually stops.",
			[]param{
				{Name: "task_id", Type: typeString, Required: true, Description: taskIDDescription},
				{Name: "reason", Type: typeString, Description: "Optional short reason, recorded in the log and forwarded to the task."},
			}, c.taskKill),
	}
}

// taskID is the task_id argument; an empty one is refused.
func taskID(args toolArgs) (string, error) {
	id := args.String("task_id")
	if id == "" {
		return "", fmt.Errorf("invalid task_id: expected a non-empty string, got %q", id)
	}
	return id, nil
}

// taskOutput reads a task (after waiting for it with wait: true): its
// output, or "(no new output)", then its status line.
func (c caller) taskOutput(ctx context.Context, args toolArgs) (string, error) {
	if c.self == nil {
		return "", errNoCaller(toolTaskOutput)
	}
	id, err := taskID(args)
	if err != nil {
		return "", err
	}
	if args.Bool("wait") {
		timeout := taskWaitDefault
		if ms, ok := args["timeout_ms"].(float64); ok {
			timeout = time.Duration(ms * float64(time.Millisecond))
		}
		if timeout <= 0 {
			return "", fmt.Errorf("invalid wait timeout: expected a positive number of milliseconds, got %v", args["timeout_ms"])
		}
		if err := c.tasks.wait(ctx, id, c.self.ID(), min(timeout, taskWaitCap)); err != nil {
			return "", err
		}
	}
	text, snapshot, err := c.tasks.read(id, c.self.ID())
	if err != nil {
		return "", err
	}
	if text == "" {
		text = "(no new output)"
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + statusLine(snapshot), nil
}

// taskList lists the caller's tasks, one "ID [KIND] STATUS — LABEL" line
// each.
func (c caller) taskList(context.Context, toolArgs) (string, error) {
	if c.self == nil {
		return "", errNoCaller(toolTaskList)
	}
	list := c.tasks.list(c.self.ID())
	if len(list) == 0 {
		return "(no background tasks)", nil
	}
	lines := make([]string, len(list))
	for i, t := range list {
		lines[i] = t.ID + " [" + t.Kind + "] " + t.Status + " \u2014 " + t.Label
	}
	return strings.Join(lines, "\n"), nil
}

// taskKill requests a task's cancellation.
func (c caller) taskKill(_ context.Context, args toolArgs) (string, error) {
	if c.self == nil {
		return "", errNoCaller(toolTaskKill)
	}
	id, err := taskID(args)
	if err != nil {
		return "", err
	}
	outcome, snapshot, err := c.tasks.kill(id, c.self.ID())
	if err != nil {
		return "", err
	}
	if outcome == "already-finished" {
		return "task " + snapshot.ID + " had already finished " + statusLine(snapshot), nil
	}
	return "requested cancellation of task " + snapshot.ID, nil
}

// backgroundTask starts a one-shot child as a task of the calling agent;
// the task's outcome is reported only after the run is disposed.
func (c caller) backgroundTask(provider, label string, req subagent.StartRequest) string {
	id := c.tasks.start("subagent", label, c.self, func(ctx context.Context) taskOutcome {
		run, err := c.service.Start(ctx, provider, req)
		if err != nil {
			if ctx.Err() != nil {
				return taskOutcome{status: taskKilled}
			}
			return taskOutcome{status: taskFailed, detail: err.Error()}
		}
		return settleRun(run)
	})
	return "started background subagent task " + id
}

// deliverNotices appends the completion notices waiting for the agent
// self to its log as user messages, so that its next model request sees
// them; they do not start a turn.
func deliverNotices(ts *tasks, live *session.Live) error {
	for _, notice := range ts.takeNotices(live.ID()) {
		msg := event.UserMessage{Content: event.Text(notice), Source: event.Source{Kind: "plugin"}, Role: "user", ID: uuid.NewString()}
		if _, err := live.Append(vocab.TypeUserMessage, msg, session.Surface()); err != nil {
			return err
		}
	}
	return nil
}
