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
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
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
	owner    *parent.Handle // the exact live agent that started it
	output   string
	reported bool // a read, wait or kill reported (or will report) its end
	waiters  int
	cancel   func(reason string)
	settled  chan struct{}
}

func (t *task) terminal() bool {
	return t.Status == taskCompleted || t.Status == taskKilled || t.Status == taskFailed
}

// taskHooks are how the registry controls a task's work: cancel asks it to
// stop (idempotent, reason forwarded as given, "" when none), done delivers
// its one outcome once the work released its resources.
type taskHooks struct {
	cancel func(reason string)
	done   <-chan taskOutcome
}

// heldNotices are the completion notices held for an agent that was
// running when its tasks ended: its next step, the end of its turn, or its
// next idle moment (armed: a flush is arranged) logs them.
type heldNotices struct {
	owner   *parent.Handle
	notices []string
	armed   bool
}

// tasks is the process-local registry of background tasks: ids "<kind>-N",
// access fenced by the owner's session id, first-wins settlement, and the
// completion notices of tasks whose end nothing reported.
type tasks struct {
	mu       sync.Mutex
	byID     map[string]*task
	order    []string
	counters map[string]int
	held     map[string]*heldNotices // by owner session id
	now      func() time.Time
}

func newTasks() *tasks {
	return &tasks{byID: map[string]*task{}, counters: map[string]int{}, held: map[string]*heldNotices{}, now: time.Now}
}

// The reasons a task's work is cancelled with when its owner is
// disposed, and when the registry is.
const (
	reasonOwnerDisposed   = "owner disposed"
	reasonServiceDisposed = "tasks service disposed"
)

// errEmptyLabel refuses a task without a label.
var errEmptyLabel = errors.New("invalid task label: expected a non-empty string")

// start registers a task of kind owned by owner, starting its work with
// run; it returns the task's id at once. An empty label, or an owner that
// is no longer live, is refused before run is called. The owner's
// disposal cancels the work and waits for it (ownerDisposed).
func (ts *tasks) start(kind, label string, owner *parent.Handle, run func() taskHooks) (string, error) {
	if label == "" {
		return "", errEmptyLabel
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	select {
	case <-owner.Disposed():
		return "", fmt.Errorf("agent %q is not the registered agent instance (background task owner must be live)", owner.ID())
	default:
	}
	hooks := run()
	ts.counters[kind]++
	t := &task{
		taskSnapshot: taskSnapshot{ID: kind + "-" + strconv.Itoa(ts.counters[kind]), Kind: kind, Label: label,
			Status: taskRunning, StartedAt: ts.now().UnixMilli()},
		owner: owner, cancel: hooks.cancel, settled: make(chan struct{}),
	}
	ts.byID[t.ID] = t
	ts.order = append(ts.order, t.ID)
	go func() { ts.settle(t, <-hooks.done) }()
	return t.ID, nil
}

// ownerDisposed cancels the live tasks of the agent id's incarnation
// (reason "owner disposed"), waits until each has settled and forgets
// them. The owner's disposal calls it, before the disposal returns.
func (ts *tasks) ownerDisposed(id string, incarnation uint64) {
	ts.stopAndForget(reasonOwnerDisposed, func(t *task) bool {
		return t.owner.ID() == id && t.owner.Incarnation() == incarnation
	})
}

// disposeAll cancels every live task (reason "tasks service disposed"),
// waits until each has settled and forgets them.
func (ts *tasks) disposeAll() {
	ts.stopAndForget(reasonServiceDisposed, func(*task) bool { return true })
}

// stopAndForget cancels the live tasks which selects with reason (they are
// stopping until their work ends), waits until they settled, then forgets
// them and their owners' held notices.
func (ts *tasks) stopAndForget(reason string, which func(*task) bool) {
	ts.mu.Lock()
	var stopped []*task
	for _, id := range ts.order {
		if t := ts.byID[id]; which(t) {
			stopped = append(stopped, t)
			if !t.terminal() {
				t.Status = taskStopping
				t.cancel(reason)
			}
		}
	}
	ts.mu.Unlock()
	for _, t := range stopped {
		<-t.settled
		ts.forget(t)
	}
}

// forget drops a settled task and the notices held for its owner.
func (ts *tasks) forget(t *task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.byID, t.ID)
	delete(ts.held, t.owner.ID())
	for i, id := range ts.order {
		if id == t.ID {
			ts.order = append(ts.order[:i], ts.order[i+1:]...)
			break
		}
	}
}

// settle records the first outcome, releases the waiters and, when no
// read, wait or kill reported the end, gives the owner the completion
// notice.
func (ts *tasks) settle(t *task, o taskOutcome) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.terminal() {
		return
	}
	t.Status, t.Detail, t.output, t.FinishedAt = o.status, o.detail, o.output, ts.now().UnixMilli()
	if t.waiters > 0 {
		t.reported = true
	}
	if !t.reported {
		ts.noticeLocked(t.owner, completionNotice(t.taskSnapshot))
	}
	close(t.settled)
}

// noticeLocked gives owner a notice as context, never as a turn: an idle
// owner's log gets it at once; a running owner's is held for its next
// step, the end of its turn, or its next idle moment, whichever comes
// first.
func (ts *tasks) noticeLocked(owner *parent.Handle, notice string) {
	if owner.Activation().Status() != inbox.Running {
		// An owner whose log is gone (released in its teardown, failed)
		// can no longer be told; nothing durable is lost.
		_ = appendNotices(owner, []string{notice})
		return
	}
	h := ts.held[owner.ID()]
	if h == nil || h.owner != owner {
		h = &heldNotices{owner: owner}
		ts.held[owner.ID()] = h
	}
	h.notices = append(h.notices, notice)
	ts.armLocked(h)
}

// armLocked arranges for h's notices to be logged once its owner is idle.
func (ts *tasks) armLocked(h *heldNotices) {
	if h.armed {
		return
	}
	h.armed = true
	h.owner.Activation().AfterIdle(func() { ts.flushIdle(h) })
}

// flushIdle logs h's notices when its owner is still idle, else waits for
// the next idle moment (the owner's turn may log them first).
func (ts *tasks) flushIdle(h *heldNotices) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	h.armed = false
	if len(h.notices) == 0 || ts.held[h.owner.ID()] != h {
		return
	}
	if h.owner.Activation().Status() == inbox.Running {
		ts.armLocked(h)
		return
	}
	_ = appendNotices(h.owner, h.notices) // a log that is gone: as noticeLocked
	h.notices = nil
}

// deliverHeld logs the notices held for the agent self: its turn calls it
// before each step and at its end.
func (ts *tasks) deliverHeld(self *parent.Handle) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	h := ts.held[self.ID()]
	if h == nil || h.owner != self || len(h.notices) == 0 {
		return nil
	}
	notices := h.notices
	h.notices = nil
	return appendNotices(self, notices)
}

// lookup returns caller's task id: unknown, or another session's, is an
// error.
func (ts *tasks) lookup(id, caller string) (*task, error) {
	t := ts.byID[id]
	if t == nil {
		return nil, fmt.Errorf("unknown task %s", id)
	}
	if t.owner.ID() != caller {
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
		if t := ts.byID[id]; t.owner.ID() == caller {
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

// kill cancels a live task with reason ("" for none; it is then stopping
// until its work ends) and reports "requested", or "already-finished" for
// a settled one; either way the end is reported.
func (ts *tasks) kill(id, caller, reason string) (string, taskSnapshot, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, err := ts.lookup(id, caller)
	if err != nil {
		return "", taskSnapshot{}, err
	}
	if t.terminal() {
		t.reported = true
		return "already-finished", t.taskSnapshot, nil
	}
	t.cancel(reason)
	t.Status, t.reported = taskStopping, true
	return "requested", t.taskSnapshot, nil
}

// errWaitAborted is a wait whose caller went away while the task was live.
var errWaitAborted = errors.New("wait aborted")

// wait blocks until the task settles, timeoutMs passes or ctx ends (an
// error only while the task is still live); it never cancels the task. An
// unknown or foreign task, then a timeout that is not positive, is an
// error.
func (ts *tasks) wait(ctx context.Context, id, caller string, timeoutMs float64) error {
	ts.mu.Lock()
	t, err := ts.lookup(id, caller)
	if err == nil && !(timeoutMs > 0) {
		err = fmt.Errorf("invalid wait timeout: expected a positive number of milliseconds, got %s",
			strconv.FormatFloat(timeoutMs, 'f', -1, 64))
	}
	if err == nil {
		t.waiters++
	}
	ts.mu.Unlock()
	if err != nil {
		return err
	}
	timer := time.NewTimer(time.Duration(timeoutMs * float64(time.Millisecond)))
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
		o = taskOutcome{status: taskFailed, detail: runFailureDetail(err)}
	} else {
		o = runOutcome(result)
	}
	if err := run.Dispose(context.Background()); err != nil {
		prefix := ""
		if o.detail != "" {
			prefix = o.detail + "; "
		}
		return taskOutcome{status: taskFailed, detail: prefix + "dispose failed: " + thrown(subagentError(err))}
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

// runFailureDetail is a run's infrastructure failure as a task detail: a
// DURABILITY_FAILED message as it is, anything else as thrown.
func runFailureDetail(err error) string {
	if errors.Is(err, fault.DurabilityFailed) {
		return err.Error()
	}
	return thrown(subagentError(err))
}

// thrown is err as a status detail names a thrown error: "<name>:
// <message>", the name "Error" unless err names itself (a SubagentError).
func thrown(err error) string {
	var named interface{ ErrorName() string }
	if errors.As(err, &named) {
		return named.ErrorName() + ": " + err.Error()
	}
	return "Error: " + err.Error()
}
