package manager

import (
	"context"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
)

// runtimeEnv is the core's env in a running manager: the runtime's
// registry and sessions, and the handles themselves.
type runtimeEnv struct{ rt *actors.Runtime }

func (e runtimeEnv) closed() error  { return e.rt.Err() }
func (e runtimeEnv) hasStore() bool { return e.rt.Sessions().Store() != nil }

func (e runtimeEnv) isLive(p *parent.Handle) bool { return e.rt.Registry().IsLive(p) }

func (e runtimeEnv) liveLineage(p *parent.Handle) []*parent.Handle {
	return e.rt.Registry().LiveLineage(p)
}

func (e runtimeEnv) liveAgent(id string) *parent.Handle { return e.rt.Registry().Get(id) }

func (e runtimeEnv) sessionLive(id string) bool {
	return e.rt.Sessions().Get(id) != nil || e.rt.Registry().Get(id) != nil
}

func (runtimeEnv) idOf(p *parent.Handle) string         { return p.ID() }
func (runtimeEnv) headerParent(h *parent.Handle) string { return h.Header().ParentSession }

func (runtimeEnv) running(h *parent.Handle) bool {
	return h.Activation().Status() == inbox.Running
}

func (runtimeEnv) writeFailure(h *parent.Handle) error { return h.Session().WriteFailure() }

func (runtimeEnv) post(h *parent.Handle, msg event.UserMessage) error {
	_, err := h.Post(context.Background(), msg)
	return err
}

func (runtimeEnv) newID() string { return inbox.NewMessageID() }
