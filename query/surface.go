package query

import (
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// foldSurface replays the surface operations of a contiguous log and
// classifies every event. The error message is the original's.
func foldSurface(events []session.Event) ([]Surface, error) {
	var f session.SurfaceFolder
	if err := f.Fold(events); err != nil {
		return nil, err
	}
	return classify(events, f.Current()), nil
}

// classify names each event of a log folded without error: current when
// it is on the surface now, shadowed when a replacement removed it (every
// message-producing event of such a log was on the surface once), else
// log-only.
func classify(events []session.Event, current []int64) []Surface {
	classes := make([]Surface, len(events))
	for i, ev := range events {
		classes[i] = surfaceLogOnly
		if vocab.OnSurface(ev.Type) {
			classes[i] = surfaceShadowed
		}
	}
	for _, seq := range current {
		classes[seq] = surfaceCurrent
	}
	return classes
}
