package dsh

import (
	"context"
	"errors"
	"fmt"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// Agent returns the handle of the exact agent live under id in this
// runtime now, top-level or continuable child, and false when none is. The
// handle stays that incarnation's: once it leaves the runtime, sends from
// it fail with fault.ParentNotLive. It does not block.
func (r *Runtime) Agent(id string) (*Handle, bool) {
	h := r.actors.Registry().Get(id)
	if h == nil {
		return nil, false
	}
	return &Handle{h: h}, true
}

// liveEpochs is a shared store that tells the epoch of a live lease: the
// Postgres store.
type liveEpochs interface {
	// LiveEpoch returns id's lease epoch while a process holds it live.
	// It blocks on the store.
	LiveEpoch(ctx context.Context, id string) (int64, bool, error)
}

// AgentElsewhere returns the handle of agent id as another process on the
// same shared store runs it now (the epoch of its live lease), and false
// when no process holds it live or the store is not shared with a durable
// inbox (a JSONL folder, memory). Such a handle only sends: Send and
// SendFrom commit the message to the child's durable inbox from that
// lease, which the store checks. It blocks on the store.
func (r *Runtime) AgentElsewhere(ctx context.Context, id string) (*Handle, bool, error) {
	store := r.actors.Sessions().Store()
	leases, ok := store.(liveEpochs)
	if _, admits := session.InboxOf(store); !ok || !admits {
		return nil, false, nil
	}
	epoch, live, err := leases.LiveEpoch(ctx, id)
	if err != nil || !live {
		return nil, false, err
	}
	return &Handle{remote: &remoteAgent{id: id, epoch: session.Epoch(epoch)}}, true, nil
}

// SendFrom is Send with the message's source given (who or what sent it:
// a person through an RPC, say). Besides Send's failures, a parent that is
// no longer the agent live under its id (it left this runtime, or another
// process took its lease) fails with fault.ParentNotLive (which also
// matches fault.Unauthorized). From a handle of AgentElsewhere, the
// message is committed to the child's durable inbox from that parent's
// lease: the store checks in that step that it is the child's parent,
// that the lease is still live (else fault.Fenced) and that no drain
// closed admission, and the commit wakes whichever process runs (or takes
// over) the child. It blocks until acceptance.
func (r *Runtime) SendFrom(ctx context.Context, p *Handle, childID string, content []event.Block, source event.Source) (string, error) {
	if err := needParent("SendFrom", p); err != nil {
		return "", err
	}
	if p.remote != nil {
		return r.admitFrom(ctx, p.remote, childID, content, source)
	}
	messageID, err := r.subagents.Followup(ctx, p.h, childID, content, source)
	if errors.Is(err, fault.Unauthorized) && !r.actors.Registry().IsLive(p.h) {
		return "", fault.New(fault.ParentNotLive, fmt.Sprintf("dsh: parent %q is no longer live here", p.ID()), err)
	}
	return messageID, err
}

// admitFrom commits content to childID's durable inbox from the parent p
// runs elsewhere, under its lease's epoch.
func (r *Runtime) admitFrom(ctx context.Context, p *remoteAgent, childID string, content []event.Block, source event.Source) (string, error) {
	in, ok := session.InboxOf(r.actors.Sessions().Store())
	if !ok {
		return "", fault.New(fault.ParentNotLive, fmt.Sprintf("dsh: parent %q runs elsewhere and the store keeps no durable inbox", p.id), nil)
	}
	msg := event.UserMessage{Content: content, Source: source, Role: event.RoleUser, ID: inbox.NewMessageID()}
	body, err := vocab.Encode(msg)
	if err != nil {
		return "", err
	}
	if _, err := in.Admit(ctx, childID, session.Admission{MessageID: msg.ID, From: p.id, FromEpoch: p.epoch, Body: body}); err != nil {
		return "", err
	}
	return msg.ID, nil
}
