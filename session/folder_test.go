package session

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Folding a log in pieces gives the surface folding it at once gives, and
// a rule broken stops the fold at that event, which a later Fold retries.
func TestSurfaceFolderFoldsIncrementally(t *testing.T) {
	appendOp := json.RawMessage(`"append"`)
	msg := func(seq int64) Event {
		return Event{Type: "user/message", Seq: seq, Data: []byte(`{}`), SurfaceOp: appendOp}
	}
	replace := msg(4)
	replace.SurfaceOp = json.RawMessage(`{"op":"replace","start":0,"end":2}`)
	replace.SourceEventSeqs = []int64{0, 2}
	events := []Event{msg(0), {Type: "turn/start", Seq: 1, Data: []byte(`{}`)}, msg(2), msg(3), replace, msg(5)}

	var whole SurfaceFolder
	require.NoError(t, whole.Fold(events))
	require.Equal(t, []int64{4, 3, 5}, whole.Current())

	var pieces SurfaceFolder
	for n := 0; n <= len(events); n++ {
		require.NoError(t, pieces.Fold(events[:n]))
	}
	require.Equal(t, whole.Current(), pieces.Current())

	bad := append(events[:6:6], Event{Type: "tool/call", Seq: 6, Data: []byte(`{}`), SurfaceOp: appendOp})
	require.ErrorContains(t, pieces.Fold(bad), "not surface-eligible")
	require.ErrorContains(t, pieces.Fold(bad), "not surface-eligible", "the broken event stays unfolded")
	require.Equal(t, []int64{4, 3, 5}, pieces.Current())
}
