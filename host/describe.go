package host

import "context"

// version is this build's version, as the CLI's ACP agent info reports it.
const version = "0"

// route is the provider and model new top-level agents start with, as
// host.describe reports them: both empty for the scripted agent.
type route struct {
	provider, model string
}

// hostDescribe answers host.describe {} (the web client's readiness call)
// with {version, cwd, provider?, model?, attachedSessions}: this build's
// version, session.create's default cwd, the route new agents start with
// (absent for the scripted agent) and the number of sessions attached
// (live) now, as the mux baseline knows them. Unknown keys are ignored.
func (h *Handler) hostDescribe(_ context.Context, c call) (any, *rpcError) {
	if bad := invalidPayload(c, readPayload(c.payload)); bad != nil {
		return nil, bad
	}
	return hostDescription{Version: version, Cwd: h.opts.Cwd, Provider: h.route.provider,
		Model: h.route.model, AttachedSessions: h.hub.attachedCount()}, nil
}

// hostDescription is host.describe's value in the original's key order.
type hostDescription struct {
	Version          string `json:"version"`
	Cwd              string `json:"cwd"`
	Provider         string `json:"provider,omitempty"`
	Model            string `json:"model,omitempty"`
	AttachedSessions int    `json:"attachedSessions"`
}

// attachedCount is the number of sessions attached now; it takes h.mu.
func (h *hub) attachedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.attached)
}
