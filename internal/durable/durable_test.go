package durable

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMessageIDReadsTheUserMessageID(t *testing.T) {
	for data, want := range map[string]string{
		`{"role":"user","id":"m-1","content":[]}`: "m-1",
		`{"role":"user","content":[]}`:            "",
		`not json`:                                "",
	} {
		require.Equal(t, want, MessageID(json.RawMessage(data)), data)
	}
}

func TestTheStoresErrorsCarryTheirCodes(t *testing.T) {
	require.Equal(t, fault.Fenced, fault.CodeOf(Fenced("s", 3)))
	require.EqualError(t, Fenced("s", 3), `session "s": epoch 3 is no longer the current lease; nothing was written`)
	require.Equal(t, fault.LeaseHeld, fault.CodeOf(LeaseHeld("s", "this store")))
}
