package host

import (
	"encoding/json"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// defaultMaxMessages is the page size when a history request omits maxMessages.
const defaultMaxMessages = 50

// page is one message-aligned slice of a transcript.
type page struct {
	events  []session.Event
	hasMore bool
}

// paginate cuts the window (all events, or those with seq < *beforeSeq)
// so that it holds the last maxMessages messages, never splitting a message
// from the chunks it groups through sourceEventSeqs. The page is the
// contiguous tail of the window from the cut; hasMore says the cut is above 0.
func paginate(events []session.Event, beforeSeq *int64, maxMessages int) page {
	window := events
	if beforeSeq != nil {
		window = eventsBefore(events, *beforeSeq)
	}
	cut := messageCut(window, maxMessages)
	first := len(window)
	for first > 0 && window[first-1].Seq >= cut {
		first--
	}
	return page{events: window[first:], hasMore: cut > 0}
}

// eventsBefore returns the prefix of events (in seq order) with seq < before.
func eventsBefore(events []session.Event, before int64) []session.Event {
	end := 0
	for end < len(events) && events[end].Seq < before {
		end++
	}
	return events[:end]
}

// messageCut walks the window backwards and returns the first seq of the
// group of the maxMessages-th message from the end, or 0 when the window
// holds fewer messages.
func messageCut(window []session.Event, maxMessages int) int64 {
	count := 0
	for i := len(window) - 1; i >= 0; i-- {
		if !isPageMessage(window[i]) {
			continue
		}
		count++
		if count == maxMessages {
			return groupStart(window[i])
		}
	}
	return 0
}

// groupStart is the smallest seq a message covers: itself or any chunk it
// was assembled from.
func groupStart(e session.Event) int64 {
	start := e.Seq
	for _, s := range e.SourceEventSeqs {
		start = min(start, s)
	}
	return start
}

// isPageMessage reports whether e is a counted message: a user, assistant
// or steering message whose surfaceOp is "append".
func isPageMessage(e session.Event) bool {
	switch e.Type {
	case vocab.TypeUserMessage, vocab.TypeAssistantMessage, vocab.TypeSteeringMessage:
	default:
		return false
	}
	var op string
	return json.Unmarshal(e.SurfaceOp, &op) == nil && op == "append"
}
