package dsh

import (
	"sync"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// NoticeKind names what a Notice reports.
type NoticeKind int

// The notices Subscribe delivers.
const (
	// SessionLive: a session became live here (created or resumed);
	// ParentSessionID, Cwd, Blank and LastSeq are set.
	SessionLive NoticeKind = iota + 1
	// SessionRunning: a live agent started (Running true) or stopped
	// running turns.
	SessionRunning
	// SessionReleased: a live session left the runtime (it stays stored).
	SessionReleased
	// SessionAppended: Event was appended to a live session's log.
	SessionAppended
	// MessageAccepted: a live agent's inbox accepted Message, whose id is
	// MessageID.
	MessageAccepted
	// MessageLeft: the message MessageID left a live agent's inbox,
	// claimed by a turn or, with Discarded, discarded unrun (More: another
	// discard of the same cancel follows).
	MessageLeft
	// ChildStarted: a run of the child SessionID under the agent
	// ParentSessionID started: an epoch of a continuable child became
	// resident (created or cold-resumed), or a one-shot run began;
	// Provider and, for a continuable child, Label are set.
	ChildStarted
	// ChildEnded: that run ended: the epoch was disposed, or the one-shot
	// run's result settled. A child's epochs end before the epoch of its
	// parent they started under (child-first). Provider and End are set.
	ChildEnded
)

// Notice is one change in the runtime's live sessions and agents.
type Notice struct {
	Kind            NoticeKind
	SessionID       string
	ParentSessionID string // SessionLive, ChildStarted, ChildEnded
	Cwd             string // SessionLive
	// Blank (SessionLive) is true while the session has run no turn (no
	// turn/start in its log): a new continuable child, holding only its
	// descriptor, is blank.
	Blank bool
	// LastSeq (SessionLive) is the seq of the session's last event when
	// it became live, -1 for none: its next SessionAppended has LastSeq+1.
	LastSeq   int64
	Running   bool              // SessionRunning
	Event     Event             // SessionAppended
	MessageID string            // MessageAccepted, MessageLeft
	Message   event.UserMessage // MessageAccepted (its Content not to be modified)
	More      bool              // MessageLeft
	// Discarded (MessageLeft) is true when the message left the inbox
	// unrun (a cancel, a teardown, a failed log) and will never be
	// logged, false when a turn claimed it.
	Discarded bool
	// Provider (ChildStarted, ChildEnded) is the provider that started
	// the child: "spawn", "fork" or an Options.ACPAgents name.
	Provider string
	// Label (ChildStarted) is a continuable child's durable label.
	Label string
	End   agent.ChildEnd // ChildEnded
}

// Subscribe calls fn for every Notice until cancel is called: the events
// of one session in the order its log and inbox made them, those of
// different sessions possibly concurrently. fn runs on the goroutine that
// made the change, so it must not block; cancel is idempotent.
func (r *Runtime) Subscribe(fn func(Notice)) (cancel func()) {
	sessions := r.actors.Sessions()
	stopSessions := sessions.Subscribe(func(c session.Change) {
		if n, ok := noticeOfChange(sessions, c); ok {
			fn(n)
		}
	})
	stopAgents := r.actors.Registry().Subscribe(func(e parent.Event) {
		if n, ok := noticeOfAgent(e); ok {
			fn(n)
		}
	})
	stopChildren := r.subagents.Subscribe(func(e subagent.Event) {
		if n, ok := noticeOfChild(sessions, e); ok {
			fn(n)
		}
	})
	var once sync.Once
	return func() { once.Do(func() { stopSessions(); stopAgents(); stopChildren() }) }
}

// noticeOfChange is the Notice of a session registry change.
func noticeOfChange(sessions *session.Sessions, c session.Change) (Notice, bool) {
	id := c.Header.ID
	switch c.Kind {
	case session.Added:
		var events []session.Event
		if live := sessions.Get(id); live != nil {
			events = live.Events()
		}
		return Notice{Kind: SessionLive, SessionID: id, ParentSessionID: c.Header.ParentSession,
			Cwd: c.Header.Cwd, Blank: blank(events), LastSeq: int64(len(events)) - 1}, true
	case session.Removed:
		return Notice{Kind: SessionReleased, SessionID: id}, true
	case session.Appended:
		return Notice{Kind: SessionAppended, SessionID: id, Event: Event(c.Event)}, true
	}
	return Notice{}, false
}

// noticeOfAgent is the Notice of an agent's status edge or inbox event.
func noticeOfAgent(e parent.Event) (Notice, bool) {
	switch e.Type {
	case inbox.StatusChange:
		return Notice{Kind: SessionRunning, SessionID: e.AgentID, Running: e.Status == inbox.Running}, true
	case inbox.Enqueue:
		return Notice{Kind: MessageAccepted, SessionID: e.AgentID, MessageID: e.MessageID, Message: e.Message}, true
	case inbox.Dequeue, inbox.Discard:
		return Notice{Kind: MessageLeft, SessionID: e.AgentID, MessageID: e.MessageID, More: e.More,
			Discarded: e.Type == inbox.Discard}, true
	}
	return Notice{}, false
}

// noticeOfChild is the Notice of a child's start or end.
func noticeOfChild(sessions *session.Sessions, e subagent.Event) (Notice, bool) {
	switch e := e.(type) {
	case *subagent.StartEvent:
		return Notice{Kind: ChildStarted, SessionID: e.ID, ParentSessionID: e.ParentID, Provider: e.Provider,
			Label: liveLabel(sessions, e.ID)}, true
	case *subagent.EndEvent:
		return Notice{Kind: ChildEnded, SessionID: e.ID, ParentSessionID: e.ParentID, Provider: e.Provider,
			End: agent.ChildEnd{StopReason: e.StopReason, LastAssistantMessage: e.LastAssistantMessage,
				DiscardedFollowups: e.DiscardedFollowups}}, true
	}
	return Notice{}, false
}

// liveLabel is the label of the descriptor in the live session id's log,
// "" when it is not live or holds none.
func liveLabel(sessions *session.Sessions, id string) string {
	live := sessions.Get(id)
	if live == nil {
		return ""
	}
	for _, e := range live.Events() {
		if e.Type == vocab.TypeSubagentDescriptor {
			if d, err := descriptor.Parse(e.Data); err == nil {
				return d.Label
			}
		}
	}
	return ""
}

// blank reports whether events hold no turn/start: no turn has run yet.
func blank(events []session.Event) bool {
	for _, e := range events {
		if e.Type == vocab.TypeTurnStart {
			return false
		}
	}
	return true
}
