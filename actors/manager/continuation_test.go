package manager

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

func descriptorEvent(payload string) session.Event {
	return session.Event{Type: vocab.TypeSubagentDescriptor, Data: json.RawMessage(payload)}
}

// logAfterSeed is a log of events whose first seedLength are its seed.
func logAfterSeed(seedLength int, events ...session.Event) *session.Log {
	return &session.Log{Header: session.Header{SeedLength: &seedLength}, Events: events}
}

func TestContinuationStateIsTheFirstDescriptorOfTheOwnSuffix(t *testing.T) {
	ancestor := descriptorEvent(`{"version":1,"provider":"spawn","label":"ancestor"}`)
	own := descriptorEvent(`{"version":1,"provider":"spawn","label":"own"}`)
	later := descriptorEvent(`{"version":1,"provider":"spawn","label":"later"}`)
	other := session.Event{Type: "turn/start", Data: json.RawMessage(`{"turn":1}`)}

	_, err := continuationState("c", &session.Log{})
	require.ErrorIs(t, err, fault.NotResumable, "no descriptor")

	d, err := continuationState("c", &session.Log{Events: []session.Event{other, own, later}})
	require.NoError(t, err)
	require.Equal(t, "own", d.Label, "the first one wins")

	d, err = continuationState("c", logAfterSeed(1, ancestor, other, own))
	require.NoError(t, err)
	require.Equal(t, "own", d.Label, "the seed's ancestor descriptor is ignored")

	_, err = continuationState("c", logAfterSeed(2, ancestor, other))
	require.ErrorIs(t, err, fault.NotResumable, "only the seed has one")

	_, err = continuationState("c", logAfterSeed(9, ancestor))
	require.ErrorIs(t, err, fault.NotResumable, "a seed length past the end")

	_, err = continuationState("c", logAfterSeed(-1, own))
	require.NoError(t, err, "a negative seed length counts as 0")
}

func TestContinuationStateReportsTheFirstDescriptorsParseFailure(t *testing.T) {
	good := descriptorEvent(`{"version":1,"provider":"spawn","label":"l"}`)

	_, err := continuationState("c", &session.Log{Events: []session.Event{descriptorEvent(`{"version":2}`), good}})
	require.ErrorIs(t, err, fault.NotResumable, "another version")

	_, err = continuationState("c", &session.Log{Events: []session.Event{descriptorEvent(`{"version":1,"provider":7}`), good}})
	require.ErrorIs(t, err, fault.DescriptorCorrupt)
}
