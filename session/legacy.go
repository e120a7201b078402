package session

import (
	"encoding/json"
	"fmt"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// legacyEvent finds the first event of the three retired vocabularies that
// the store refuses on every read and append (request/header-delta,
// mode/set, and a request/header with reason "fallback") and describes it
// as the original does.
func legacyEvent(id string, events []Event) (string, bool) {
	for _, e := range events {
		switch e.Type {
		case vocab.TypeRequestHeaderDelta, vocab.TypeModeSet:
			return fmt.Sprintf(`session "%s" contains unsupported legacy %s event at seq %d`, id, e.Type, e.Seq), true
		case vocab.TypeRequestHeader:
			var data struct {
				Reason string `json:"reason"`
			}
			if json.Unmarshal(e.Data, &data) == nil && data.Reason == "fallback" {
				return fmt.Sprintf(`session "%s" contains unsupported legacy request/header reason "fallback" at seq %d`,
					id, e.Seq), true
			}
		}
	}
	return "", false
}

// unknownEvent refuses a log holding an event whose type is outside the
// known vocabulary and not marked ignorable: it was written by a newer
// harness, and a reader that interpreted it (or appended to it) would
// misread it. The error names the first such event and the file.
func unknownEvent(id string, events []Event, path string) error {
	for _, e := range events {
		if e.Ignorable || vocab.Known(e.Type) {
			continue
		}
		return &unsupportedError{ID: id, Path: path, Msg: vocab.UnknownTypeMessage(id, e.Type, e.Seq, path), inBody: true}
	}
	return nil
}
