package activation

import (
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// conversation is the agent's conversation kept up to date with its
// session: the surface fold advances over the events appended since the
// last read, and each message is decoded once, when it reaches the
// surface, so a read costs a copy of the entries rather than a decode of
// the log.
type conversation struct {
	mu      sync.Mutex
	fold    session.SurfaceFolder
	entries map[int64]agent.Entry // decoded messages by seq, those on the surface
}

// Conversation is the agent's conversation as the model sees it now (see
// agent.Host.Conversation), read from the live session's events in
// memory: on cold resume those are the events the one load read. The
// entries share their content with later reads: do not modify them.
func (a *Activation) Conversation() ([]agent.Entry, error) {
	c := a.conversed()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read(a.live.Events())
}

// remember caches the entry of the assistant message m the turn logged at
// seq, so the next read does not decode it again, when decoding the
// logged bytes gives that same entry (see readsBackAsIs).
func (a *Activation) remember(seq int64, m vocab.AssistantMessage) {
	if !readsBackAsIs(m.Message) {
		return
	}
	e := agent.Entry{Seq: seq, Role: event.RoleAssistant, ID: m.Message.ID, Model: m.Message.Source, Content: slices.Clone(m.Message.Content)}
	c := a.conversed()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[int64]agent.Entry{}
	}
	c.entries[seq] = e
}

// conversed is the agent's conversation, made on first use so that an
// agent whose conversation nobody reads carries none.
func (a *Activation) conversed() *conversation {
	if c := a.conversation.Load(); c != nil {
		return c
	}
	a.conversation.CompareAndSwap(nil, new(conversation))
	return a.conversation.Load()
}

// readsBackAsIs reports whether m's JSON decodes to m itself: its
// strings are valid UTF-8 (the log would replace invalid bytes), its
// blocks are plain text blocks and its source has no replay state (raw
// JSON the log would compact).
func readsBackAsIs(m vocab.Message) bool {
	src := m.Source
	if src.ReplayState != nil || !validUTF8(m.ID, src.Kind, src.Provider, src.Model) {
		return false
	}
	for _, b := range m.Content {
		if b.Raw != nil || !validUTF8(b.Type, b.Text) {
			return false
		}
	}
	return true
}

func validUTF8(s ...string) bool {
	for _, x := range s {
		if !utf8.ValidString(x) {
			return false
		}
	}
	return true
}

// read folds events (extending the ones read before) and returns the
// surface's entries in order.
func (c *conversation) read(events []session.Event) ([]agent.Entry, error) {
	if err := c.fold.Fold(events); err != nil {
		return nil, fmt.Errorf("actors: conversation: %w", err)
	}
	if c.entries == nil {
		c.entries = map[int64]agent.Entry{}
	}
	nodes := c.fold.Current()
	out := make([]agent.Entry, len(nodes))
	for i, seq := range nodes {
		e, ok := c.entries[seq]
		if !ok {
			var err error
			if e, err = entryOf(events[seq]); err != nil {
				return nil, fmt.Errorf("actors: conversation: %w", err)
			}
			c.entries[seq] = e
		}
		out[i] = e
	}
	if len(c.entries) > 2*len(nodes)+8 { // replaced messages stay off the surface for good
		c.prune(nodes)
	}
	return out, nil
}

// prune forgets the decoded messages no longer on the surface.
func (c *conversation) prune(nodes []int64) {
	keep := make(map[int64]agent.Entry, len(nodes))
	for _, seq := range nodes {
		keep[seq] = c.entries[seq]
	}
	c.entries = keep
}

// entryOf decodes the message a surface event carries.
func entryOf(e session.Event) (agent.Entry, error) {
	p, err := vocab.Decode(e.Type, e.Data)
	if err != nil {
		return agent.Entry{}, fmt.Errorf("event at seq %d: %w", e.Seq, err)
	}
	switch m := p.(type) {
	case event.UserMessage:
		return userEntry(e.Seq, m), nil
	case vocab.SteeringMessage:
		return userEntry(e.Seq, m.Message), nil
	case vocab.AssistantMessage:
		return agent.Entry{Seq: e.Seq, Role: event.RoleAssistant, ID: m.Message.ID, Model: m.Message.Source, Content: m.Message.Content}, nil
	case vocab.ToolResult:
		return toolEntry(e.Seq, m)
	}
	return agent.Entry{}, fmt.Errorf("event at seq %d: %s carries no message", e.Seq, e.Type)
}

func userEntry(seq int64, m event.UserMessage) agent.Entry {
	return agent.Entry{Seq: seq, Role: event.RoleUser, ID: m.ID, Source: m.Source, Content: m.Content}
}

// toolEntry is a tool result's entry: its one tool-result block's content.
func toolEntry(seq int64, r vocab.ToolResult) (agent.Entry, error) {
	if len(r.Message.Content) != 1 {
		return agent.Entry{}, fmt.Errorf("event at seq %d: a tool result must hold one tool-result block", seq)
	}
	block := r.Message.Content[0]
	return agent.Entry{
		Seq: seq, Role: event.RoleTool, ID: r.Message.ID, Source: r.Message.Source,
		Content: block.Content, ToolCallID: block.ToolCallID, IsError: block.IsError,
	}, nil
}
