package host

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// TestFactsKeepTheLastTurnPastOtherEvents: once a log's facts are known,
// an appended turn/end that failed sets lastTurn, an event after it that is
// no turn boundary keeps it, and a turn/start clears it.
func TestFactsKeepTheLastTurnPastOtherEvents(t *testing.T) {
	c := newFactCache()
	_, err := c.get("s", func() ([]session.Event, error) { return nil, nil })
	require.NoError(t, err)
	end, err := json.Marshal(vocab.TurnEnd{Turn: 1, Reason: vocab.Reason{Kind: vocab.ReasonError, Step: 1, Message: "boom", Code: "E1"}})
	require.NoError(t, err)
	appended := func(typ string, seq int64, data json.RawMessage) {
		c.observe(dsh.Notice{Kind: dsh.SessionAppended, SessionID: "s", Event: dsh.Event{Type: typ, Seq: seq, Data: data}})
	}
	lastTurn := func() *turnOutcome {
		f, err := c.get("s", nil)
		require.NoError(t, err)
		return f.lastTurn
	}
	appended(vocab.TypeTurnEnd, 1, end)
	require.Equal(t, &turnOutcome{Kind: vocab.ReasonError, Message: "boom", Code: "E1"}, lastTurn())
	appended(vocab.TypeUserMessage, 2, json.RawMessage(`{"id":"m","role":"user","source":{"kind":"user"},"content":[]}`))
	require.Equal(t, &turnOutcome{Kind: vocab.ReasonError, Message: "boom", Code: "E1"}, lastTurn(), "an event after the turn keeps its outcome")
	appended(vocab.TypeTurnStart, 3, json.RawMessage(`{"turn":2}`))
	require.Nil(t, lastTurn(), "a new turn clears it")
}
