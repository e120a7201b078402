package inbox

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/stretchr/testify/require"
)

// TestEmitWaitsForTheDeliveryUnderWay: an Emit that finds another
// goroutine delivering this inbox's events returns only once that
// goroutine has delivered its event too, in order (agent/disposed is
// out when Dispose returns, even while the turn's goroutine is still
// announcing the idle status).
func TestEmitWaitsForTheDeliveryUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hold := make(chan struct{})
		var seen []string
		b := newInbox(func(e Event) {
			if e.Type == "agent/first" {
				<-hold
			}
			seen = append(seen, string(e.Type))
		})
		go b.Emit(Event{Type: "agent/first"}) // this goroutine delivers, and blocks in the observer
		synctest.Wait()
		var returned atomic.Bool
		go func() {
			b.Emit(Event{Type: "agent/second"})
			returned.Store(true)
		}()
		synctest.Wait()
		require.False(t, returned.Load(), "the second Emit waits for the delivery under way")
		close(hold)
		synctest.Wait()
		require.True(t, returned.Load())
		require.Equal(t, []string{"agent/first", "agent/second"}, seen)
	})
}

// TestEmitFromTheObserverDoesNotWaitForItself: an observer may emit into
// the inbox it is called for (a listener disposing the agent it is told
// about); that event follows once the observer returns.
func TestEmitFromTheObserverDoesNotWaitForItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b *Inbox
		var seen []string
		b = newInbox(func(e Event) {
			seen = append(seen, string(e.Type))
			if e.Type == "agent/created" {
				b.Emit(Event{Type: "agent/disposed"})
				seen = append(seen, "emitted")
			}
		})
		b.Emit(Event{Type: "agent/created"})
		require.Equal(t, []string{"agent/created", "emitted", "agent/disposed"}, seen)
	})
}

func TestInsideDeliveryKnowsTheObserverCall(t *testing.T) {
	var inside []bool
	b := newInbox(func(Event) { inside = append(inside, InsideDelivery()) })
	b.Emit(Event{Type: "agent/created"})
	require.Equal(t, []bool{true}, inside)
	require.False(t, InsideDelivery())
}

// TestEmitFromAnObserverOfPostDoesNotWaitForItself: the events of a Post
// are delivered by the posting goroutine; an observer of them that emits
// into the same inbox (a listener disposing the agent a message was
// accepted for) is inside the delivery and does not wait for itself.
func TestEmitFromAnObserverOfPostDoesNotWaitForItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b *Inbox
		var seen []string
		b = newInbox(func(e Event) {
			seen = append(seen, string(e.Type))
			if e.Type == Enqueue {
				b.Emit(Event{Type: "agent/disposed"})
			}
		})
		_, err := b.Post(event.UserMessage{ID: "m"})
		require.NoError(t, err)
		require.Equal(t, []string{string(Enqueue), string(StatusChange), "agent/disposed"}, seen)
	})
}
