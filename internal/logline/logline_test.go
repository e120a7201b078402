package logline_test

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/logline"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The codec the session package registered writes the lines its JSONL
// store writes and refuses what that store refuses.
func TestTheSessionPackageRegistersItsCodec(t *testing.T) {
	c := logline.Of[session.Header, session.Event]()
	line, err := c.HeaderLine(session.Header{ID: "a", CreatedAt: 1})
	require.NoError(t, err)
	require.Equal(t, `{"type":"session","version":0,"id":"a","createdAt":1,"delegationDepth":0}`, string(line))
	_, err = c.HeaderLine(session.Header{ID: "a", Cwd: "relative"})
	require.ErrorIs(t, err, session.ErrInvalid)

	start := session.Event{Type: "turn/start", Seq: 0, Time: 5, Data: json.RawMessage(`{"turn":1}`)}
	lines, err := c.EventLines("a", 0, []session.Event{start})
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte(`{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}`)}, lines)
	_, err = c.EventLines("a", 1, []session.Event{start})
	require.ErrorIs(t, err, session.ErrSeqMismatch)

	closers, closerLines := c.InterruptedTurn([]session.Event{start})
	require.NotEmpty(t, closers)
	require.Len(t, closerLines, len(closers))
	require.Equal(t, "turn/end", closers[len(closers)-1].Type)
	none, noLines := c.InterruptedTurn(nil)
	require.Empty(t, none)
	require.Empty(t, noLines)
}

// Of for types the codec was not registered for, and a second Register,
// are programming errors.
func TestMisuseIsAPanic(t *testing.T) {
	require.Panics(t, func() { logline.Of[string, int]() })
	require.Panics(t, func() { logline.Register(logline.Codec[string, int]{}) })
}
