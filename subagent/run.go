package subagent

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// StartRequest is a one-shot delegation.
type StartRequest struct {
	// Prompt is the child's only message.
	Prompt []event.Block
	// Parent is the delegating agent.
	Parent *parent.Handle
	// OutputSchema asks for a structured result (a JSON object schema;
	// needs the outputSchema capability).
	OutputSchema json.RawMessage
	// MaxDepth caps the child's delegation depth (needs depthLimit).
	MaxDepth *int
	// ToolFilter restricts the child's tools (needs toolFilter).
	ToolFilter *event.ToolFilter
	// Persona is the child's persona (needs persona).
	Persona string
}

// Result is what a one-shot run produced. A child-level failure is a
// result with a non-completed StopReason, not an error.
type Result struct {
	Output     []event.Block
	StopReason agent.StopReason
	// Structured is the final answer as JSON valid against the request's
	// OutputSchema (nil without one); an answer that is not valid ends
	// the run with StopReason error instead.
	Structured json.RawMessage
}

// Run is one disposable one-shot delegation: the caller owns it from the
// moment Start returns and must Dispose it on every path.
type Run struct {
	// id is the run's id: the child's session id for a local run.
	id string
	// localAgent is the exact child agent of a local run, nil for a remote
	// one.
	localAgent *parent.Handle

	done     chan struct{}
	result   Result
	err      error
	settle   sync.Once
	dispose  func(ctx context.Context) error
	mu       sync.Mutex // serializes Dispose
	closed   bool
	closeErr error
}

// NewRun is how a Provider builds the run its Start returns: id is the
// run's lifecycle id (the child's session id for a local run; for a remote
// one an id minted in this process, never the remote peer's), local the
// exact child agent of a local run (nil for a remote one). It returns the
// run and the function that settles its result (only the first call
// counts; the provider must call it on every path, an error only for an
// infrastructure fault). dispose cancels whatever remains and blocks until
// the child's resources are released, or ctx is done; Run.Dispose calls it
// until it succeeds once, then never again. NewRun does not block.
func NewRun(id string, local *parent.Handle, dispose func(ctx context.Context) error) (*Run, func(Result, error)) {
	r := &Run{id: id, localAgent: local, done: make(chan struct{}), dispose: dispose}
	return r, r.finish
}

// ID is the run's lifecycle id: the child's session id for a local run, an
// id minted in this process for a remote one.
func (r *Run) ID() string { return r.id }

// LocalAgent is the exact child agent of a local run, nil for a remote one.
func (r *Run) LocalAgent() *parent.Handle { return r.localAgent }

func (r *Run) finish(res Result, err error) {
	r.settle.Do(func() {
		r.result, r.err = res, err
		close(r.done)
	})
}

// Result blocks until the run's result settled or ctx is done. It returns
// an error only for an infrastructure fault (or ctx's error); a failed child
// is a Result with its stop reason.
func (r *Run) Result(ctx context.Context) (Result, error) {
	select {
	case <-r.done:
		return r.result, r.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// Dispose cancels the run's remaining work and blocks until the child's
// resources are released and the result settled, or ctx is done. It is
// idempotent: after a completed Dispose it returns the same outcome at once.
// It returns only a disposal failure, never the result's.
func (r *Run) Dispose(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.closeErr
	}
	err := r.dispose(ctx)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.closed, r.closeErr = true, err
	return err
}
