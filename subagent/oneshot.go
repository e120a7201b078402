package subagent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dsh-actors/dsh-actors/actors/manager"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/google/uuid"
)

// errInvalidOutputSchema rejects a one-shot outputSchema that is not a JSON
// object schema ({"type":"object", ...}).
var errInvalidOutputSchema = errors.New("subagent outputSchema must be a JSON object schema")

// Start runs a one-shot child through the named provider. In order, and
// before the provider is called: the provider lookup (NO_PROVIDER), the
// capabilities the request needs (UNSUPPORTED_CAPABILITY, checked
// outputSchema, depthLimit, toolFilter, persona), maxDepth valid, the
// outputSchema an object schema. It blocks until the provider published the
// child; then subagent/start is emitted and the run returned, and
// subagent/end follows when its result settles. A provider failure emits
// nothing and leaves nothing to dispose. ctx is the run's cancellation
// channel: done before the child is published, Start fails; done after,
// the run's remaining work is cancelled.
func (s *Service) Start(ctx context.Context, name string, req StartRequest) (*Run, error) {
	p := s.providers.get(name)
	if p == nil {
		return nil, manager.NoProvider(name)
	}
	if err := checkCapabilities(name, p.Capabilities(), req); err != nil {
		return nil, err
	}
	if err := manager.AssertMaxDepth(req.MaxDepth); err != nil {
		return nil, err
	}
	if req.OutputSchema != nil && !objectSchema(req.OutputSchema) {
		return nil, errInvalidOutputSchema
	}
	run, err := p.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	s.observeRun(name, req, run)
	return run, nil
}

// checkCapabilities returns UNSUPPORTED_CAPABILITY for the first
// capability req needs that caps lacks.
func checkCapabilities(provider string, caps Capabilities, req StartRequest) error {
	needs := []struct {
		name      string
		needed    bool
		supported bool
	}{
		{"outputSchema", req.OutputSchema != nil, caps.OutputSchema},
		{"depthLimit", req.MaxDepth != nil, caps.DepthLimit},
		{"toolFilter", req.ToolFilter != nil, caps.ToolFilter},
		{"persona", req.Persona != "", caps.Persona},
	}
	for _, n := range needs {
		if n.needed && !n.supported {
			return unsupportedCapability(provider, n.name)
		}
	}
	return nil
}

// objectSchema reports whether raw is a JSON object with "type":"object".
func objectSchema(raw json.RawMessage) bool {
	var schema map[string]json.RawMessage
	if json.Unmarshal(raw, &schema) != nil {
		return false
	}
	var typ string
	return json.Unmarshal(schema["type"], &typ) == nil && typ == "object"
}

// observeRun emits the run's subagent/start now and its subagent/end when
// its result settles (with lastAssistantMessage always present on a
// resolved result; stop reason error and no message on a rejected one).
func (s *Service) observeRun(provider string, req StartRequest, run *Run) {
	info := manager.RunInfo{RunID: uuid.NewString(), Provider: provider, ID: run.id, Local: run.localAgent != nil}
	if req.Parent != nil {
		info.ParentID = req.Parent.ID()
	}
	s.events.emitContained(&StartEvent{RunInfo: info})
	go func() {
		<-run.done
		end := manager.RunEndInfo{RunInfo: info, StopReason: agent.Error}
		if run.err == nil {
			end.StopReason = run.result.StopReason
			end.LastAssistantMessage = append([]event.Block{}, run.result.Output...)
		}
		s.events.emitContained(&EndEvent{RunEndInfo: end})
	}()
}
