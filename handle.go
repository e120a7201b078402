package dsh

import (
	"context"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// Handle is a live top-level agent of a Runtime, as StartAgent,
// ResumeAgent and OpenAgent return it: the parent that Spawn, Send and
// Drain take. It reads the agent; it cannot write to its log or dispose
// it (Drain, Shutdown and Close do). A handle from a closed runtime, or
// from before the agent was disposed, is stale: the calls taking it fail
// with fault.Unauthorized.
type Handle struct{ h *parent.Handle }

// ID is the agent's id, which is also its session's.
func (h *Handle) ID() string { return h.h.ID() }

// WhenIdle blocks until the agent has run every message it accepted (no
// turn runs and none waits) or ctx ends, then returns ctx's error.
func (h *Handle) WhenIdle(ctx context.Context) error { return h.h.Activation().WhenIdle(ctx) }

// Conversation is the agent's conversation as its model sees it now, in
// order (see agent.Host.Conversation); it reads memory only.
func (h *Handle) Conversation() ([]agent.Entry, error) { return h.h.Activation().Conversation() }

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

// parentOf is the live handle underneath h; nil for a nil h.
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
