package host

import (
	"context"
	"encoding/json"
	"testing"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// modelLike logs a turn as a model agent does when its message is "model"
// (a step calling a tool, then a step answering) and is the scripted
// agent otherwise.
func modelLike(opts agent.Options) agent.Agent {
	scripted := agent.Scripted(opts)
	return agent.Func(func(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
		if event.TextOf(msg.Content) != "model" {
			return scripted.RunTurn(ctx, host, msg)
		}
		call := event.ToolCallBlock{ID: "call_1", Name: "list_agents", Arguments: "{}"}
		s, err := host.Step(ctx)
		if err != nil {
			return agent.Error, err
		}
		m := s.(vocab.Transcript)
		block := call.Block()
		errs := []error{
			m.RequestHeader(ctx, vocab.Header{Config: vocab.Config{Provider: "p", Model: "m"}}, vocab.HeaderInitial),
			m.Chunk(ctx, vocab.Chunk{Type: vocab.ChunkBlockEnd, Block: &block}),
			m.Chunk(ctx, vocab.Chunk{Type: vocab.ChunkFinish, Finish: &vocab.FinishReason{Kind: vocab.FinishToolCalls}}),
		}
		_, err = m.MessageWithUsage(ctx, []event.Block{block}, &vocab.Usage{InputTokens: 3, OutputTokens: 1})
		errs = append(errs, err, s.ToolCall(ctx, call))
		_, err = s.ToolResult(ctx, agent.ToolResult{CallID: "call_1", Content: event.Text("none")})
		errs = append(errs, err, s.End(ctx))
		for _, err := range errs {
			if err != nil {
				return agent.Error, err
			}
		}
		return agent.Completed, host.Say(ctx, event.Text("DONE"))
	})
}

// TestAModelTurnRoundTripsThroughTheReaders: what a model turn logs reaches
// the session query, ListChildren and subagent.history unchanged (the same
// bytes the store holds).
func TestAModelTurnRoundTripsThroughTheReaders(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	opened, err := dsh.Open(dsh.Options{Dir: root, NewAgent: modelLike})
	require.NoError(t, err)
	backend := newRuntimeBackend(opened)
	handler := newHandler(backend, Options{})
	t.Cleanup(func() {
		handler.Close()
		backend.close()
		require.NoError(t, opened.Close())
	})
	parentID := started(t, opened, "")
	converse(t, opened, parentID, "spawn worker: model")
	s := &runtimeStack{rt: opened, backend: backend}
	children := s.settled(t, parentID, 1)
	child := children[0].ID

	var stored *session.Log
	var records []query.EventRecord
	planted(t, root, "", func(store *session.JSONL) { // a second reader of the settled child's log
		stored, err = store.Inspect(ctx, child)
		require.NoError(t, err)
		records, err = query.New(session.NewSessions(store)).ListEvents(ctx, child)
		require.NoError(t, err, "the surface rules hold for the model turn")
	})
	var types []string
	for _, e := range stored.Events {
		types = append(types, e.Type)
	}
	require.Subset(t, types, []string{vocab.TypeRequestHeader, vocab.TypeAssistantChunk, vocab.TypeToolCall, vocab.TypeToolResult})

	require.Len(t, records, len(stored.Events))
	for i, r := range records {
		require.Equal(t, stored.Events[i].Type, r.Type, "query seq %d", i)
		if vocab.OnSurface(r.Type) {
			require.Equal(t, query.Surface("current"), r.Surface, "every message of the turn is on the surface")
		}
	}
	read, err := opened.History(ctx, child)
	require.NoError(t, err)
	require.Len(t, read.Events, len(stored.Events))
	for i, e := range read.Events {
		require.Equal(t, stored.Events[i], session.Event(e), "History reads the bytes the store holds (seq %d)", i)
	}

	r := callRPC(t, handler, "subagent.history", map[string]any{"parentSessionId": parentID, "childSessionId": child})
	require.True(t, r.Result.OK, string(r.Result.Value))
	var page struct {
		Events []struct {
			Event json.RawMessage `json:"event"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal(r.Result.Value, &page))
	require.Len(t, page.Events, len(stored.Events), "the page holds the whole short log")
	for i, e := range page.Events {
		want, err := json.Marshal(stored.Events[i])
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(e.Event), "history seq %d", i)
	}
	require.Equal(t, kindChild, children[0].Kind, "ListChildren reads the model turn's child as healthy")
	require.Equal(t, "worker", children[0].Label)
}
