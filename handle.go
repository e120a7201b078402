package dsh

import (
	"context"
	"fmt"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
)

// Handle is a live agent of a Runtime, as StartAgent, ResumeAgent and
// OpenAgent return a top-level one and Agent any one: the parent that
// Spawn, Send and Drain take. It reads the agent; it cannot write to its
// log or dispose it (Drain, Shutdown and Close do). A handle from a closed
// runtime, or from before the agent was disposed, is stale: the calls
// taking it fail with fault.Unauthorized. A handle from AgentElsewhere
// names an agent another process runs: it only sends (Send, SendFrom),
// and its reads fail with fault.LeaseHeld.
type Handle struct {
	h      *parent.Handle
	remote *remoteAgent // set, and h nil, for an agent another process runs
}

// remoteAgent is an agent another process runs on a shared store: its id
// and the epoch of its live lease.
type remoteAgent struct {
	id    string
	epoch session.Epoch
}

// ID is the agent's id, which is also its session's.
func (h *Handle) ID() string {
	if h.remote != nil {
		return h.remote.id
	}
	return h.h.ID()
}

// elsewhere is the fault.LeaseHeld refusal of a read of an agent another
// process runs; nil for a local one.
func (h *Handle) elsewhere(op string) error {
	if h.remote == nil {
		return nil
	}
	return fault.New(fault.LeaseHeld, fmt.Sprintf("dsh: %s: agent %q runs in another process", op, h.remote.id), nil)
}

// WhenIdle blocks until the agent has run every message it accepted (no
// turn runs and none waits) or ctx ends, then returns ctx's error.
func (h *Handle) WhenIdle(ctx context.Context) error {
	if err := h.elsewhere("WhenIdle"); err != nil {
		return err
	}
	return h.h.Activation().WhenIdle(ctx)
}

// Conversation is the agent's conversation as its model sees it now, in
// order (see agent.Host.Conversation); it reads memory only.
func (h *Handle) Conversation() ([]agent.Entry, error) {
	if err := h.elsewhere("Conversation"); err != nil {
		return nil, err
	}
	return h.h.Activation().Conversation()
}

// LastReply is the text of the agent's last assistant message so far, ""
// when it has none; it reads memory only.
func (h *Handle) LastReply() (string, error) {
	entries, err := h.Conversation()
	for i := len(entries) - 1; i >= 0 && err == nil; i-- {
		if entries[i].Role == event.RoleAssistant {
			return event.TextOf(entries[i].Content), nil
		}
	}
	return "", err
}

// parentOf is the live handle underneath h; nil for a nil h or one of
// another process.
func parentOf(h *Handle) *parent.Handle {
	if h == nil {
		return nil
	}
	return h.h
}

// handleOf wraps a live handle returned with err.
func handleOf(h *parent.Handle, err error) (*Handle, error) {
	if err != nil {
		return nil, err
	}
	return &Handle{h: h}, nil
}
