package subagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

// stubProvider returns runs with no local agent whose result is given;
// with hold set, a run's result settles only when the test calls release.
type stubProvider struct {
	name     string
	caps     Capabilities
	hold     bool
	mu       sync.Mutex
	starts   int
	seen     []StartRequest
	fail     error
	result   Result
	reject   error
	settles  []func(Result, error)
	disposed int
}

func (p *stubProvider) Name() string                { return p.name }
func (p *stubProvider) Capabilities() Capabilities  { return p.caps }
func (p *stubProvider) InheritsParentContext() bool { return false }

func (p *stubProvider) Start(_ context.Context, req StartRequest) (*Run, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starts++
	p.seen = append(p.seen, req)
	if p.fail != nil {
		return nil, p.fail
	}
	run, settle := NewRun(fmt.Sprintf("remote-%d", p.starts), nil, func(context.Context) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.disposed++
		return nil
	})
	if p.hold {
		p.settles = append(p.settles, settle)
	} else {
		settle(p.result, p.reject)
	}
	return run, nil
}

// release settles the held runs with the provider's result.
func (p *stubProvider) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, settle := range p.settles {
		settle(p.result, p.reject)
	}
	p.settles = nil
}

func (p *stubProvider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

func (p *stubProvider) disposals() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.disposed
}

// events records lifecycle events.
type events struct {
	mu   sync.Mutex
	list []Event
	more chan struct{}
}

func record(s *Service) *events {
	e := &events{more: make(chan struct{}, 64)}
	s.Subscribe(func(ev Event) {
		e.mu.Lock()
		e.list = append(e.list, ev)
		e.mu.Unlock()
		e.more <- struct{}{}
	})
	return e
}

func (e *events) types() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var types []string
	for _, ev := range e.list {
		types = append(types, ev.Type())
	}
	return types
}

// waitFor blocks until n events were recorded; it fails the test naming
// what it waited for after a minute.
func (e *events) waitFor(n int) []Event {
	deadline := time.After(time.Minute)
	for {
		e.mu.Lock()
		if len(e.list) >= n {
			list := append([]Event(nil), e.list...)
			e.mu.Unlock()
			return list
		}
		have := len(e.list)
		e.mu.Unlock()
		select {
		case <-e.more:
		case <-deadline:
			panic(fmt.Sprintf("waited a minute for %d lifecycle events, heard %d", n, have))
		}
	}
}

// A provider written outside this package is registered beside others,
// listed in insertion order, looked up, used, and removed: removal stops
// new starts (NO_PROVIDER, the provider not called) but not a run it
// returned before, which still settles and disposes.
func TestRegistersListsLooksUpStartsAndRemovesProviders(t *testing.T) {
	s := detached(t)
	rec := record(s)
	alpha := &stubProvider{name: "alpha", hold: true, result: Result{Output: event.Text("late"), StopReason: agent.Completed}}
	beta := &stubProvider{name: "beta"}
	removeAlpha, err := s.RegisterProvider(alpha)
	require.NoError(t, err)
	_, err = s.RegisterProvider(beta)
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "beta"}, s.List())
	require.Same(t, alpha, s.GetProvider("alpha"))
	require.Nil(t, s.GetProvider("gamma"))

	run, err := s.Start(bg, "alpha", StartRequest{Prompt: event.Text("hi")})
	require.NoError(t, err)
	require.Equal(t, "remote-1", run.ID())
	require.Nil(t, run.LocalAgent())
	removeAlpha()
	removeAlpha()
	require.Nil(t, s.GetProvider("alpha"))
	require.Equal(t, []string{"beta"}, s.List())
	_, err = s.Start(bg, "alpha", StartRequest{Prompt: event.Text("again")})
	require.ErrorIs(t, err, fault.NoProvider)
	require.Equal(t, 1, alpha.count(), "a removed provider is not called")

	alpha.release()
	res, err := run.Result(bg)
	require.NoError(t, err, "a run returned before the removal still settles")
	require.Equal(t, Result{Output: event.Text("late"), StopReason: agent.Completed}, res)
	require.NoError(t, run.Dispose(bg))
	require.NoError(t, run.Dispose(bg), "idempotent")
	require.Equal(t, 1, alpha.disposals(), "disposed once")
	rec.waitFor(5)
	require.Equal(t, []string{vocab.TypeSubagentProviderAdded, vocab.TypeSubagentProviderAdded, vocab.TypeSubagentStart,
		vocab.TypeSubagentProviderRemoved, vocab.TypeSubagentEnd}, rec.types())
	removed := rec.waitFor(5)[3].(*providerRemovedEvent)
	require.Equal(t, "alpha", removed.name)
	added := rec.waitFor(5)[0].(*providerAddedEvent)
	require.Same(t, alpha, added.provider)
}

func TestRegistrationRollsBackWhenProviderAddedPanics(t *testing.T) {
	s := detached(t)
	s.Subscribe(func(ev Event) {
		if ev.Type() == vocab.TypeSubagentProviderAdded {
			panic("added boom")
		}
	})
	_, err := s.RegisterProvider(&stubProvider{name: "alpha"})
	require.ErrorContains(t, err, "added boom")
	require.Nil(t, s.GetProvider("alpha"))
	require.Empty(t, s.List())
}

func TestDuplicateAndAbsentProvidersAreTypedErrors(t *testing.T) {
	s := detached(t)
	_, err := s.RegisterProvider(&stubProvider{name: "alpha"})
	require.NoError(t, err)
	_, err = s.RegisterProvider(&stubProvider{name: "alpha"})
	require.ErrorIs(t, err, fault.DuplicateProvider)
	require.EqualError(t, err, `a subagent provider named "alpha" is already registered`)
	_, err = s.Start(bg, "missing", StartRequest{})
	require.ErrorIs(t, err, fault.NoProvider)
	require.EqualError(t, err, `no subagent provider registered for "missing"`)
}

// Start borrows the caller's request: the provider sees the very prompt,
// parent, cap and filter the caller passed, not copies; there is no
// provider continuation operation.
func TestStartBorrowsTheRequestAndExposesNoContinuationOperations(t *testing.T) {
	s := detached(t)
	p := &stubProvider{name: "one-shot", caps: Capabilities{DepthLimit: true, ToolFilter: true}, result: Result{StopReason: agent.Completed}}
	_, err := s.RegisterProvider(p)
	require.NoError(t, err)
	depth := 2
	req := StartRequest{Prompt: event.Text("hi"), MaxDepth: &depth, ToolFilter: &event.ToolFilter{Deny: []string{"x"}}}
	run, err := s.Start(bg, "one-shot", req)
	require.NoError(t, err)
	require.NoError(t, run.Dispose(bg))
	require.Len(t, p.seen, 1)
	seen := p.seen[0]
	require.Same(t, &req.Prompt[0], &seen.Prompt[0], "the prompt is the caller's, not a copy")
	require.Same(t, req.MaxDepth, seen.MaxDepth)
	require.Same(t, req.ToolFilter, seen.ToolFilter)
	_, resumes := reflect.TypeOf(s).MethodByName("Resume")
	require.False(t, resumes)
}

// No host authority, residency query, cancellation,
// steering or report operation; runs cannot steer.
func TestThePublicSurfaceHasNoExtraOperations(t *testing.T) {
	service := reflect.TypeOf(&Service{})
	for _, name := range []string{"ActivationState", "Cancel", "Kill", "Report", "Resume", "Steer",
		"SteerContinuable", "UserAuthority", "DrainContinuable", "Interrupt", "ReportFrom", "ListDescendants"} {
		_, ok := service.MethodByName(name)
		require.False(t, ok, name)
	}
	_, ok := reflect.TypeOf(&Run{}).MethodByName("Steer")
	require.False(t, ok)
}

func TestContinuableOperationsNeedARuntime(t *testing.T) {
	s := detached(t)
	_, err := s.StartContinuable(bg, manager.StartSpec{Provider: "spawn", Label: "x"})
	require.ErrorIs(t, err, fault.ContinuationUnavailable)
	require.EqualError(t, err, "continuable subagents require the agents service")
	_, err = s.Followup(bg, nil, "child", event.Text("x"), event.Source{Kind: "user"})
	require.ErrorIs(t, err, fault.ContinuationUnavailable)
	require.NoError(t, s.DrainContinuableDescendants(bg, nil), "a no-op without a manager")
}

func TestStartChecksCapabilitiesInOrderBeforeTheProvider(t *testing.T) {
	one := 1
	cases := []struct {
		capability string
		req        StartRequest
	}{
		{"outputSchema", StartRequest{OutputSchema: json.RawMessage(`{"type":"object"}`), MaxDepth: &one}},
		{"depthLimit", StartRequest{MaxDepth: &one, Persona: "p"}},
		{"toolFilter", StartRequest{ToolFilter: &event.ToolFilter{Deny: []string{"x"}}, Persona: "p"}},
		{"persona", StartRequest{Persona: "p"}},
	}
	for _, c := range cases {
		t.Run(c.capability, func(t *testing.T) {
			s := detached(t)
			p := &stubProvider{name: "bare"}
			_, err := s.RegisterProvider(p)
			require.NoError(t, err)
			_, err = s.Start(bg, "bare", c.req)
			require.ErrorIs(t, err, fault.UnsupportedCapability)
			require.EqualError(t, err, `subagent provider "bare" does not support the "`+c.capability+`" capability`)
			require.Zero(t, p.count())
		})
	}
}

func TestStartValidatesDepthAndSchemaBeforeTheProvider(t *testing.T) {
	s := detached(t)
	p := &stubProvider{name: "full", caps: Capabilities{OutputSchema: true, DepthLimit: true, ToolFilter: true, Persona: true}}
	_, err := s.RegisterProvider(p)
	require.NoError(t, err)
	negative := -1
	_, err = s.Start(bg, "full", StartRequest{MaxDepth: &negative})
	require.ErrorIs(t, err, fault.InvalidRequest)
	require.EqualError(t, err, "subagent maxDepth must be a non-negative safe integer")
	_, err = s.Start(bg, "full", StartRequest{OutputSchema: json.RawMessage(`{"type":"string"}`)})
	require.ErrorIs(t, err, errInvalidOutputSchema)
	require.Zero(t, p.count())
	require.NoError(t, manager.AssertMaxDepth(nil))
}

func TestOneShotLifecyclePairsByRunIDAndCarriesTheResult(t *testing.T) {
	s := detached(t)
	rec := record(s)
	p := &stubProvider{name: "alpha", result: Result{Output: event.Text("the answer"), StopReason: agent.Completed}}
	_, err := s.RegisterProvider(p)
	require.NoError(t, err)
	for range 2 {
		run, err := s.Start(bg, "alpha", StartRequest{})
		require.NoError(t, err)
		require.NoError(t, run.Dispose(bg))
	}
	all := rec.waitFor(5)[1:]
	starts, ends := map[string]bool{}, map[string]manager.RunEndInfo{}
	for _, ev := range all {
		switch e := ev.(type) {
		case *StartEvent:
			starts[e.RunID] = true
			require.False(t, e.Local)
		case *EndEvent:
			require.True(t, starts[e.RunID], "start before end")
			ends[e.RunID] = e.RunEndInfo
		}
	}
	require.Len(t, starts, 2, "distinct run ids")
	for _, end := range ends {
		require.Equal(t, "alpha", end.Provider)
		require.Equal(t, agent.Completed, end.StopReason)
		require.Equal(t, event.Text("the answer"), end.LastAssistantMessage)
	}

	p.result = Result{StopReason: agent.Completed}
	run, err := s.Start(bg, "alpha", StartRequest{})
	require.NoError(t, err)
	end := rec.waitFor(7)[6].(*EndEvent)
	require.NotNil(t, end.LastAssistantMessage, "always present on a resolved one-shot")
	require.Empty(t, end.LastAssistantMessage)
	body, err := json.Marshal(end.RunEndInfo)
	require.NoError(t, err)
	require.Contains(t, string(body), `"lastAssistantMessage":[]`)
	require.NoError(t, run.Dispose(bg))

	p.reject = errors.New("transport gone")
	run, err = s.Start(bg, "alpha", StartRequest{})
	require.NoError(t, err)
	_, err = run.Result(bg)
	require.EqualError(t, err, "transport gone")
	end = rec.waitFor(9)[8].(*EndEvent)
	require.Equal(t, agent.Error, end.StopReason)
	require.Nil(t, end.LastAssistantMessage)
	require.NoError(t, run.Dispose(bg))
}

func TestNoLifecycleWhenTheProviderRejects(t *testing.T) {
	s := detached(t)
	_, err := s.RegisterProvider(&stubProvider{name: "alpha", fail: errors.New("no")})
	require.NoError(t, err)
	rec := record(s)
	_, err = s.Start(bg, "alpha", StartRequest{})
	require.EqualError(t, err, "no")
	require.Empty(t, rec.types())
}

// A panicking listener of subagent/start, subagent/end or
// subagent/provider-removed is logged, and the listeners after it still
// hear every event.
func TestLifecycleListenersAreContained(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	s := detached(t, WithLogger(logger))
	remove, err := s.RegisterProvider(&stubProvider{name: "alpha", result: Result{StopReason: agent.Completed}})
	require.NoError(t, err)
	s.Subscribe(func(Event) { panic("sync boom") })
	s.Subscribe(func(Event) { panic(struct{}{}) })
	rec := record(s)
	run, err := s.Start(bg, "alpha", StartRequest{})
	require.NoError(t, err)
	require.NoError(t, run.Dispose(bg))
	rec.waitFor(2)
	remove()
	require.Equal(t, []string{vocab.TypeSubagentStart, vocab.TypeSubagentEnd, vocab.TypeSubagentProviderRemoved}, rec.types())
	mu.Lock()
	defer mu.Unlock()
	for _, typ := range []string{vocab.TypeSubagentStart, vocab.TypeSubagentEnd, vocab.TypeSubagentProviderRemoved} {
		require.Contains(t, logs.String(), "subagent: "+typ+" listener threw: sync boom")
		require.Contains(t, logs.String(), "subagent: "+typ+" listener threw: <unrenderable thrown value>")
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestErrorsMatchByCode(t *testing.T) {
	err := fault.New(fault.NotResumable, `subagent "c1" is unavailable`, errors.New("gone"))
	wrapped := errors.Join(errors.New("context"), err)
	require.ErrorIs(t, wrapped, fault.NotResumable)
	require.NotErrorIs(t, wrapped, fault.Unauthorized)
	var typed *fault.Error
	require.ErrorAs(t, wrapped, &typed)
	require.Equal(t, fault.NotResumable, typed.Code)
	require.EqualError(t, typed.Cause, "gone")
}

func TestListingWithoutAQueryFailsLoud(t *testing.T) {
	s := detached(t)
	_, err := s.ListChildren(bg, "parent")
	require.ErrorIs(t, err, fault.SessionQueryUnavailable)
	require.ErrorIs(t, err, fault.SessionQueryUnavailable)
	require.EqualError(t, err, "listing subagents requires session query (load a dsh-session-query backend)")
}

// detached is a service without a runtime or a query.
func detached(t *testing.T, opts ...Option) *Service {
	t.Helper()
	s, err := New(nil, nil, opts...)
	require.NoError(t, err)
	return s
}
