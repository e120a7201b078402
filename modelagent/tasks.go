package modelagent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// The statuses of a background task: running, optionally stopping, then
// one terminal status.
const (
	taskRunning   = "running"
	taskStopping  = "stopping"
	taskCompleted = "completed"
	taskKilled    = "killed"
	taskFailed    = "failed"
)

// taskOutcome is how a task's work ended: its terminal status, a detail
// for the status line, and its final output.
type taskOutcome struct {
	status, detail, output string
}

// taskSnapshot is a task as the tools show it.
type taskSnapshot struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Label      string `json:"label"`
	Status     string `json:"status"`
	Detail     string `json:"detail,omitempty"`
	StartedAt  int64  `json:"startedAt"`
	FinishedAt int64  `json:"finishedAt,omitempty"`
}

// task is one registered background task; its fields are the registry's,
// guarded by its mutex.
type task struct {
	taskSnapshot
	owner    string // the owning agent's session id
	output   string
	reported bool // a read, wait or kill reported (or will report) its end
	waiters  int
	cancel   context.CancelFunc
	settled  chan struct{}
}

func (t *task) terminal() bool {
	return t.Status == taskCompleted || t.Status == taskKilled || t.Status == taskFailed
}

// tasks is the process-local registry of background tasks: ids "<kind>-N",
// access fenced by the owner's session id, first-wins settlement, and the
// completion notices waiting for their owner's next model step.
type tasks struct {
	mu       sync.Mutex
	byID     map[string]*task
	order    []string
	counters map[string]int
	notices  map[string][]string // owner session id -> notices not yet delivered
	now      func() time.Time
}

func newTasks() *tasks {
	return &tasks{byID: map[string]*task{}, counters: map[string]int{}, notices: map[string][]string{}, now: time.Now}
}

// start registers a task of kind owned by owner and runs work on its own
// goroutine with a context that kill, and the owner's disposal, cancel.
// The owner's disposal also waits for the task to settle and then forgets
// it. It returns the task's id at once.
func (ts *tasks) start(kind, label string, owner *parent.Handle, work func(ctx context.Context) taskOutcome) string {
	ctx, cancel := context.WithCancel(context.Background())
	ts.mu.Lock()
	ts.counters[kind]++
	t := &task{
		taskSnapshot: taskSnapshot{ID: kind + "-" + strconv.Itoa(ts.counters[kind]), Kind: kind, Label: label,
			Status: taskRunning, StartedAt: ts.now().UnixMilli()},
		owner: owner.ID(), cancel: cancel, settled: make(chan struct{}),
	}
	ts.byID[t.ID] = t
	ts.order = append(ts.order, t.ID)
	ts.mu.Unlock()
	go func() { ts.settle(t, work(ctx)) }()
	go func() {
		select {
		case <-owner.Disposed():
			ts.stop(t)
			<-t.settled
			ts.forget(t)
		case <-t.settled:
		}
	}()
	return t.ID
}

// stop cancels a live task for its owner's teardown.
func (ts *tasks) stop(t *task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !t.terminal() {
		t.Status = taskStopping
	}
	t.cancel()
}

// forget drops a settled task and its owner's notices.
func (ts *tasks) forget(t *task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.byID, t.ID)
	delete(ts.notices, t.owner)
	for i, id := range ts.order {
		if id == t.ID {
			ts.order = append(ts.order[:i], ts.order[i+1:]...)
			break
		}
	}
}

// settle records the first outcome, releases the waiters and, when no
// read, wait or kill reported the end, queues the completion notice for
// the owner.
func (ts *tasks) settle(t *task, o taskOutcome) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.cancel()
	if t.terminal() {
		return
	}
	t.Status, t.Detail, t.output, t.FinishedAt = o.status, o.detail, o.output, ts.now().UnixMilli()
	if t.waiters > 0 {
		t.reported = true
	}
	if !t.reported {
		ts.notices[t.owner] = append(ts.notices[t.owner], completionNotice(t.taskSnapshot))
	}
	close(t.settled)
}

// takeNotices returns and forgets the notices waiting for owner.
func (ts *tasks) takeNotices(owner string) []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	notices := ts.notices[owner]
	delete(ts.notices, owner)
	return notices
}

// lookup returns caller's task id: unknown, or another session's, is an
// error.
func (ts *tasks) lookup(id, caller string) (*task, error) {
	t := ts.byID[id]
	if t == nil {
		return nil, fmt.Errorf("unknown task %s", id)
	}
	if t.owner != caller {
		return nil, fmt.Errorf("task %s belongs to another session", id)
	}
	return t, nil
}

// list is caller's tasks in registration order.
func (ts *tasks) list(caller string) []taskSnapshot {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []taskSnapshot
	for _, id := range ts.order {
		if t := ts.byID[id]; t.owner == caller {
			out = append(out, t.taskSnapshot)
		}
	}
	return out
}

// read is the task's final output once settled ("" while live) and its
// snapshot; a read of a settled task reports its end.
func (ts *tasks) read(id, caller string) (string, taskSnapshot, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, err := ts.lookup(id, caller)
	if err != nil {
		return "", taskSnapshot{}, err
	}
	if !t.terminal() {
		return "", t.taskSnapshot, nil
	}
	t.reported = true
	return t.output, t.taskSnapshot, nil
}

// kill cancels a live task (it is then stopping until its work ends) and
// reports "requested", or "already-finished" for a settled one; either way
// the end is reported.
func (ts *tasks) kill(id, caller string) (string, taskSnapshot, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, err := ts.lookup(id, caller)
	if err != nil {
		return "", taskSnapshot{}, err
	}
	t.reported = true
	if t.terminal() {
		return "already-finished", t.taskSnapshot, nil
	}
	t.cancel()
	t.Status = taskStopping
	return "requested", t.taskSnapshot, nil
}

// errWaitAborted is a wait whose caller went away while the task was live.
var errWaitAborted = errors.New("wait aborted")

// wait blocks until the task settles, timeout passes or ctx ends (an error
// only while the task is still live); it never cancels the task.
func (ts *tasks) wait(ctx context.Context, id, caller string, timeout time.Duration) error {
	ts.mu.Lock()
	t, err := ts.lookup(id, caller)
	if err == nil {
		t.waiters++
	}
	ts.mu.Unlock()
	if err != nil {
		return err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.settled:
	case <-timer.C:
	case <-ctx.Done():
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.waiters--
	if t.terminal() {
		t.reported = true
		return nil
	}
	if ctx.Err() != nil {
		return errWaitAborted
	}
	return nil
}

// statusLine is "[status: S]" or "[status: S, DETAIL]".
func statusLine(s taskSnapshot) string {
	if s.Detail != "" {
		return "[status: " + s.Status + ", " + s.Detail + "]"
	}
	return "[status: " + s.Status + "]"
}

// completionNotice tells the owner its task ended unreported.
func completionNotice(s taskSnapshot) string {
	return "background task " + s.ID + " (" + s.Kind + ": " + s.Label + ") finished " + statusLine(s) +
		". Read its output with task_output."
}

// settleRun waits for a one-shot run's result, disposes the run, then
// returns its outcome: completed with its text, aborted as killed, any
// other stop reason failed with it as detail, an infrastructure fault
// failed with its message; a failed disposal is failed, keeping both
// details.
func settleRun(run *subagent.Run) taskOutcome {
	var o taskOutcome
	if result, err := run.Result(context.Background()); err != nil {
		o = taskOutcome{status: taskFailed, detail: err.Error()}
	} else {
		o = runOutcome(result)
	}
	if err := run.Dispose(context.Background()); err != nil {
		prefix := ""
		if o.detail != "" {
			prefix = o.detail + "; "
		}
		return taskOutcome{status: taskFailed, detail: prefix + "dispose failed: " + err.Error()}
	}
	return o
}

// runOutcome maps a run's result to a task outcome.
func runOutcome(r subagent.Result) taskOutcome {
	switch r.StopReason {
	case agent.Completed:
		return taskOutcome{status: taskCompleted, output: event.TextOf(r.Output)}
	case agent.Aborted:
		return taskOutcome{status: taskKilled}
	}
	return taskOutcome{status: taskFailed, detail: string(r.StopReason)}
}
