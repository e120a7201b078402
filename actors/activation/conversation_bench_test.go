package activation

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// conversationLog is a log of n messages, alternately a user message and
// an assistant reply, each turn framed by its lifecycle events.
func conversationLog(b *testing.B, n int) []session.Event {
	b.Helper()
	var events []session.Event
	add := func(p vocab.Payload, surface bool) {
		data, err := vocab.Encode(p)
		if err != nil {
			b.Fatal(err)
		}
		e := session.Event{Type: p.EventType(), Seq: int64(len(events)), Data: data}
		if surface {
			e.SurfaceOp = json.RawMessage(`"append"`)
		}
		events = append(events, e)
	}
	source := event.ModelSource{Kind: event.SourceModel, Provider: "p", Model: "m"}
	for turn := 1; len(events) == 0 || turn <= n/2; turn++ {
		text := fmt.Sprintf("message %d: a sentence of ordinary length to stand for what people type", turn)
		add(vocab.TurnStart{Turn: turn, Trigger: &vocab.Trigger{Kind: vocab.TriggerMessage, Source: &event.Source{Kind: "user"}}}, false)
		add(event.UserMessage{Content: event.Text(text), Source: event.Source{Kind: "user"}, Role: event.RoleUser, ID: fmt.Sprint("u", turn)}, true)
		add(vocab.Step{Turn: turn, Step: 1, Kind: vocab.TypeStepStart}, false)
		add(vocab.AssistantMessage{Turn: turn, Step: 1, Message: vocab.Message{Role: event.RoleAssistant, Content: event.Text("reply to " + text),
			Source: source, ID: fmt.Sprint("a", turn)}}, true)
		add(vocab.Step{Turn: turn, Step: 1, Kind: vocab.TypeStepEnd}, false)
		add(vocab.TurnEnd{Turn: turn, Reason: vocab.Reason{Kind: vocab.ReasonCompleted}}, false)
	}
	return events
}

// BenchmarkConversation compares, for a 1,000-message conversation, the
// read a turn does at its start (the conversation kept up to date: every
// message already decoded, as it was when it reached the surface) with
// decoding the same message events once.
// Their ratio is the figure: about 1 means a turn's read costs no more
// than one decode of the conversation, not a re-parse of the log per turn.
//
//	go test -run '^$' -bench Conversation -benchtime 2000x ./actors/activation/
func BenchmarkConversation(b *testing.B) {
	events := conversationLog(b, 1000)
	b.Run("read-at-turn-start", func(b *testing.B) {
		var c conversation
		if _, err := c.read(events); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			entries, err := c.read(events)
			if err != nil || len(entries) != 1000 {
				b.Fatal(err, len(entries))
			}
		}
	})
	b.Run("decode-once", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, e := range events {
				if !vocab.OnSurface(e.Type) {
					continue
				}
				if _, err := entryOf(e); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 1000 {
				b.Fatal(n)
			}
		}
	})
}
