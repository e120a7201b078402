package modelagent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/dsh-actors/dsh-actors/actors/parent"
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

// The waits of task_output in milliseconds: wait without timeout_ms, and
// the most any wait lasts.
const (
	taskWaitDefaultMs = 30_000
	taskWaitCapMs     = 600_000
)

// tasksGuidance is the system prompt section of the task tools, after the
// agent's system prompt.
const tasksGuidance = "Track every background task id you start. You are notified in-session when a task " +
	"finishes \u2014 do not busy-poll or sleep on one; keep working on independent steps and do not duplicate a " +
	"running task's work. Before giving a final answer, collect every still-relevant task with task_output (set " +
	"wait: true only when you are genuinely blocked on it), and task_kill tasks that stopped mattering."

// The one-shot background wording of the delegation tools.
const (
	taskBackgroundSentence = " Set `run_in_background: true` to return a task id; collect with `task_output` and stop with `task_kill`."
	taskBackgroundParam    = "Run as a background task and return its id; collect with task_output or stop with task_kill."
	taskIDDescription      = "Task id returned by the tool that started the background work."
)

// taskTools are task_kill, task_list and task_output (in name order, as
// the original lists tools) bound to the calling agent c.self over its
// tasks.
func taskTools(c caller) []toolDef {
	return []toolDef{
		builtin(toolTaskKill, "Request cancellation of a running background task by task id. "+
			"Returns immediately; the task settles as killed once its work actually stops.",
			[]param{
				{Name: "task_id", Type: typeString, Required: true, Description: taskIDDescription},
				{Name: "reason", Type: typeString, Description: "Optional short reason, recorded in the log and forwarded to the task."},
			}, c.taskKill),
		builtin(toolTaskList, "List your background tasks (running and finished) with their ids, kinds, and statuses.",
			nil, c.taskList),
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
		timeoutMs := float64(taskWaitDefaultMs)
		if ms, ok := args["timeout_ms"].(json.Number); ok {
			timeoutMs, _ = ms.Float64() // the schema let only a number through
		}
		if err := c.tasks.wait(ctx, id, c.self.ID(), min(timeoutMs, taskWaitCapMs)); err != nil {
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
	outcome, snapshot, err := c.tasks.kill(id, c.self.ID(), args.String("reason"))
	if err != nil {
		return "", err
	}
	if outcome == "already-finished" {
		return "task " + snapshot.ID + " had already finished " + statusLine(snapshot), nil
	}
	return "requested cancellation of task " + snapshot.ID, nil
}

// backgroundTask starts a one-shot child as a task of the calling agent;
// the task's outcome is reported only after the run is disposed. A kill
// cancels the run with its reason as the context's cause ("background
// subagent task killed" without one).
func (c caller) backgroundTask(provider, label string, req subagent.StartRequest) (string, error) {
	id, err := c.tasks.start("subagent", label, c.self, func() taskHooks {
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan taskOutcome, 1)
		go func() {
			outcome := c.runTask(ctx, provider, req)
			cancel(nil) // the run is disposed: release the context
			done <- outcome
		}()
		return taskHooks{done: done, cancel: func(reason string) {
			cancel(errors.New(cmp.Or(reason, "background subagent task killed")))
		}}
	})
	if err != nil {
		return "", err
	}
	return "started background subagent task " + id, nil
}

// runTask starts the run and settles it: a start failure is killed when
// ctx was cancelled, else failed with the error as detail.
func (c caller) runTask(ctx context.Context, provider string, req subagent.StartRequest) taskOutcome {
	run, err := c.service.Start(ctx, provider, req)
	if err != nil {
		if ctx.Err() != nil {
			return taskOutcome{status: taskKilled}
		}
		return taskOutcome{status: taskFailed, detail: thrown(subagentError(err))}
	}
	return settleRun(run)
}

// appendNotices logs notices to owner's session as user messages from the
// plugin "tool-tasks", in order; they start no turn. An owner whose log is
// gone (released, failed) refuses them: the error is returned.
func appendNotices(owner *parent.Handle, notices []string) error {
	for _, notice := range notices {
		msg := event.UserMessage{Content: event.Text(notice), Source: event.Source{Kind: "plugin", Plugin: "tool-tasks"},
			Role: "user", ID: uuid.NewString()}
		if _, err := owner.Session().Append(vocab.TypeUserMessage, msg, session.Surface()); err != nil {
			return err
		}
	}
	return nil
}
