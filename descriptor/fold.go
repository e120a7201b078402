package descriptor

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/event"
)

// Event is the part of a session event Fold needs: its type and raw payload.
type Event struct {
	Type string
	Data json.RawMessage
}

// Fold parses the first descriptor event of the session's own suffix, the
// events at index seedLength and later (a fork seed's replayed ancestor
// descriptor is ignored; a negative seedLength counts as 0). ok is false
// when the suffix holds no descriptor. Otherwise the result is Parse's:
// a malformed payload is fault.DescriptorCorrupt, another version fault.DescriptorUnsupported.
// Later descriptors are not looked at: the first one wins.
func Fold(events []Event, seedLength int) (d Data, ok bool, err error) {
	for _, ev := range events[min(max(seedLength, 0), len(events)):] {
		if ev.Type == event.TypeSubagentDescriptor {
			d, err = Parse(ev.Data)
			return d, true, err
		}
	}
	return Data{}, false, nil
}
