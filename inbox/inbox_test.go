package inbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a fake actor: it records what the mailbox invokes. With
// autoEnd it ends each turn as soon as it is claimed.
type recorder struct {
	box     *Inbox
	autoEnd bool

	mu     sync.Mutex
	claims []*Claim
	user   []any
	system []any
	events []Event
}

func (r *recorder) InvokeSystemMessage(m any) {
	r.mu.Lock()
	r.system = append(r.system, m)
	r.mu.Unlock()
}

func (r *recorder) InvokeUserMessage(m any) {
	r.mu.Lock()
	claim, ok := m.(*Claim)
	if ok {
		r.claims = append(r.claims, claim)
	} else {
		r.user = append(r.user, m)
	}
	r.mu.Unlock()
	if ok && r.autoEnd {
		r.box.EndTurn()
	}
}

func (r *recorder) EscalateFailure(reason, _ any) { panic(reason) }

func (r *recorder) observe(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) claimed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, len(r.claims))
	for i, c := range r.claims {
		ids[i] = c.Message.ID
	}
	return ids
}

func (r *recorder) eventLog() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	log := make([]string, len(r.events))
	for i, e := range r.events {
		log[i] = strings.TrimPrefix(string(e.Type), "agent/") + " " + e.MessageID + string(e.Status)
	}
	return log
}

// newRecorded returns an inbox wired to a recorder, dispatched by
// protoactor's default (goroutine per run) dispatcher.
func newRecorded(autoEnd bool) (*Inbox, *recorder) {
	r := &recorder{autoEnd: autoEnd}
	r.box = newInbox(r.observe)
	Mailbox(r.box).RegisterHandlers(r, actor.NewDefaultDispatcher(DefaultThroughput))
	return r.box, r
}

func post(t *testing.T, b *Inbox, id string) {
	t.Helper()
	got, err := b.Post(event.UserMessage{ID: id, Content: event.Text(id)})
	require.NoError(t, err)
	require.Equal(t, id, got)
}

func TestFIFOAcrossConcurrentSenders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const senders, each = 32, 40
		b, r := newRecorded(true)
		var wg sync.WaitGroup
		for s := range senders {
			wg.Go(func() {
				for i := range each {
					_, err := b.Post(event.UserMessage{ID: fmt.Sprintf("%d-%d", s, i)})
					require.NoError(t, err)
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		var accepted []string
		for _, e := range r.eventLog() {
			if id, ok := strings.CutPrefix(e, "inbox/enqueue "); ok {
				accepted = append(accepted, id)
			}
		}
		claimed := r.claimed()
		require.Len(t, claimed, senders*each)
		require.Equal(t, accepted, claimed, "turns claim messages in accepted order")
		next := make([]int, senders)
		for _, id := range claimed {
			s, i, _ := strings.Cut(id, "-")
			sender, _ := strconv.Atoi(s)
			seq, _ := strconv.Atoi(i)
			require.Equal(t, next[sender], seq, "each sender's messages stay in its order")
			next[sender]++
		}
		require.Equal(t, Idle, b.Status())
	})
}

func TestMessagePostedDuringTurnWaitsForEndTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		synctest.Wait()
		post(t, b, "b")
		synctest.Wait()
		require.Equal(t, []string{"a"}, r.claimed(), "b waits while a's turn runs")
		require.Equal(t, 1, b.queueLen())
		b.EndTurn()
		synctest.Wait()
		require.Equal(t, []string{"a", "b"}, r.claimed())
		b.EndTurn()
		require.Equal(t, []string{
			"inbox/enqueue a", "status running", "inbox/dequeue a",
			"inbox/enqueue b", "inbox/dequeue b", "status idle",
		}, r.eventLog())
	})
}

// The enqueue event carries the accepted message (id and role filled in);
// no other event carries one.
func TestEnqueueEventCarriesTheAcceptedMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(true)
		id, err := b.Post(event.UserMessage{Content: event.Text("hi"), Source: event.Source{Kind: "user"}})
		require.NoError(t, err)
		synctest.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		var carried []event.UserMessage
		for _, e := range r.events {
			if e.Type != Enqueue {
				require.Zero(t, e.Message, "only agent/inbox/enqueue carries the message")
				continue
			}
			require.Equal(t, event.UserMessage{ID: id, Role: "user", Content: event.Text("hi"), Source: event.Source{Kind: "user"}}, e.Message)
			carried = append(carried, e.Message)
		}
		require.Len(t, carried, 1)
		require.Equal(t, carried[0], r.claims[0].Message, "the turn claims the message the event carried")
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, it := range b.queue[:cap(b.queue)] {
			require.Zero(t, it.msg, "the claimed message is no longer held by the queue's buffer")
		}
	})
}

func TestCancelKeepInboxAbortsOnlyTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		post(t, b, "b")
		synctest.Wait()
		require.Empty(t, b.Cancel(agent.CancelCause{Kind: agent.CauseUser}, true))
		turn := r.claims[0].Context()
		require.Error(t, turn.Err())
		require.Equal(t, agent.CancelCause{Kind: agent.CauseUser}, context.Cause(turn))
		b.EndTurn()
		synctest.Wait()
		require.Equal(t, []string{"a", "b"}, r.claimed())
		require.NoError(t, r.claims[1].Context().Err(), "the kept message's turn is not cancelled")
		b.EndTurn()
	})
}

func TestCancelDiscardsQueuedMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		synctest.Wait()
		post(t, b, "b")
		post(t, b, "c")
		require.Equal(t, []string{"b", "c"}, b.Cancel(agent.CancelCause{Kind: agent.CauseParent}, false))
		b.EndTurn()
		synctest.Wait()
		require.Equal(t, []string{"a"}, r.claimed(), "discarded messages never run")
		require.Equal(t, Idle, b.Status())
		require.Equal(t, []string{
			"inbox/enqueue a", "status running", "inbox/dequeue a", "inbox/enqueue b", "inbox/enqueue c",
			"inbox/discard b", "inbox/discard c", "status idle",
		}, r.eventLog())
		r.mu.Lock()
		defer r.mu.Unlock()
		var more []bool
		for _, e := range r.events {
			if e.Type == Discard {
				more = append(more, e.More)
			}
		}
		require.Equal(t, []bool{true, false}, more, "one Cancel's discards end with the one whose More is false")
	})
}

func TestDiscardDropsTheQueueAndKeepsTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		synctest.Wait()
		post(t, b, "b")
		post(t, b, "c")
		require.Equal(t, []string{"b", "c"}, b.Discard())
		require.NoError(t, r.claims[0].Context().Err(), "the claimed turn runs on")
		require.Equal(t, Running, b.Status())
		b.EndTurn()
		synctest.Wait()
		require.Equal(t, []string{"a"}, r.claimed())
		require.Equal(t, []string{
			"inbox/enqueue a", "status running", "inbox/dequeue a", "inbox/enqueue b", "inbox/enqueue c",
			"inbox/discard b", "inbox/discard c", "status idle",
		}, r.eventLog())
		require.Empty(t, b.Discard(), "nothing queued")
	})
}

func TestCancelWhileIdleArmsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		require.Empty(t, b.Cancel(agent.CancelCause{Kind: agent.CauseUser}, false))
		post(t, b, "a")
		synctest.Wait()
		require.NoError(t, r.claims[0].Context().Err())
		b.EndTurn()
		require.Equal(t, []string{"inbox/enqueue a", "status running", "inbox/dequeue a", "status idle"}, r.eventLog())
	})
}

func TestCloseRefusesLaterPosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		post(t, b, "b")
		synctest.Wait()
		require.Equal(t, []string{"b"}, b.Close(agent.CancelCause{Kind: agent.CauseDisposed}))
		require.True(t, b.isClosed())
		_, err := b.Post(event.UserMessage{ID: "c"})
		require.ErrorIs(t, err, errClosed)
		require.Equal(t, agent.CancelCause{Kind: agent.CauseDisposed}, context.Cause(r.claims[0].Context()))
		require.Empty(t, b.Close(agent.CancelCause{Kind: agent.CauseDisposed}), "idempotent")
		b.EndTurn()
		require.Equal(t, Idle, b.Status())
	})
}

func TestSystemMessagesRunDuringATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		post(t, b, "b")
		synctest.Wait()
		Mailbox(b).PostSystemMessage(&actor.Stop{})
		synctest.Wait()
		require.Equal(t, []any{&actor.Stop{}}, r.system, "a system message gets through while a turn runs")
		Mailbox(b).PostSystemMessage(&actor.SuspendMailbox{})
		b.EndTurn()
		synctest.Wait()
		require.Equal(t, []string{"a"}, r.claimed(), "a suspended mailbox claims nothing")
		Mailbox(b).PostSystemMessage(&actor.ResumeMailbox{})
		synctest.Wait()
		require.Equal(t, []string{"a", "b"}, r.claimed())
		b.EndTurn()
	})
}

func TestControlMessagesRunDuringATurnUnlessSuspended(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		post(t, b, "b")
		synctest.Wait()
		require.True(t, b.PostControl("spawn 1"))
		synctest.Wait()
		require.Equal(t, []any{"spawn 1"}, r.user, "a control message gets through while a turn runs")
		Mailbox(b).PostSystemMessage(&actor.SuspendMailbox{})
		synctest.Wait()
		require.True(t, b.PostControl("spawn 2"))
		synctest.Wait()
		require.Equal(t, []any{"spawn 1"}, r.user, "not while suspended")
		Mailbox(b).PostSystemMessage(&actor.ResumeMailbox{})
		synctest.Wait()
		require.Equal(t, []any{"spawn 1", "spawn 2"}, r.user)
		require.Equal(t, []string{"a"}, r.claimed(), "the turn lane still waits for the turn's end")

		Mailbox(b).PostSystemMessage(&actor.SuspendMailbox{})
		synctest.Wait()
		require.True(t, b.PostControl("spawn 3"))
		require.Equal(t, []any{"spawn 3"}, b.CloseControl(), "what was queued is handed back")
		require.False(t, b.PostControl("spawn 4"), "refused once closed")
		Mailbox(b).PostSystemMessage(&actor.ResumeMailbox{})
		b.EndTurn()
		synctest.Wait()
		require.Equal(t, []any{"spawn 1", "spawn 2"}, r.user)
		require.Equal(t, []string{"a", "b"}, r.claimed())
		b.EndTurn()
	})
}

func TestRawUserMessagesKeepTheirPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(true)
		poison := &actor.PoisonPill{}
		Mailbox(b).RegisterHandlers(r, nil) // not yet dispatching
		post(t, b, "a")
		Mailbox(b).PostUserMessage(poison)
		post(t, b, "b")
		require.Equal(t, 3, Mailbox(b).UserMessageCount())
		Mailbox(b).RegisterHandlers(r, actor.NewDefaultDispatcher(DefaultThroughput))
		Mailbox(b).PostSystemMessage(&actor.Started{})
		synctest.Wait()
		require.Equal(t, []string{"a", "b"}, r.claimed())
		require.Equal(t, []any{poison}, r.user)
		require.Empty(t, b.Cancel(agent.CancelCause{Kind: agent.CauseUser}, false))
	})
}

func TestObserverMayCallBackIntoTheInbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b *Inbox
		var seen []string
		b = newInbox(func(e Event) {
			seen = append(seen, string(e.Type)+" "+e.MessageID)
			if e.Type == Enqueue {
				b.Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
			}
		})
		id, err := b.Post(event.UserMessage{})
		require.NoError(t, err)
		require.Len(t, id, 36, "a uuid was assigned")
		require.Equal(t, []string{
			"agent/inbox/enqueue " + id, "agent/status ", "agent/inbox/discard " + id, "agent/status ",
		}, seen)
		require.Equal(t, Idle, b.Status())
	})
}

func TestEmitJoinsTheOrderedEventStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		b := newInbox(r.observe) // no dispatcher: nothing is claimed
		b.Emit(Event{Type: "agent/created"})
		post(t, b, "a")
		b.Emit(Event{Type: "agent/custom"})
		require.Equal(t, []string{"created ", "inbox/enqueue a", "status running", "custom "}, r.eventLog())
	})
}

func TestWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRecorded(false)
		require.NoError(t, b.WhenIdle(context.Background()))
		post(t, b, "a")
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, b.WhenIdle(ctx), context.Canceled)
		idle := make(chan error)
		go func() { idle <- b.WhenIdle(context.Background()) }()
		synctest.Wait()
		select {
		case <-idle:
			t.Fatal("WhenIdle returned while a turn runs")
		default:
		}
		b.EndTurn()
		require.NoError(t, <-idle)
	})
}

func TestNewMessageIDIsAVersion4UUID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewMessageID()
		parsed, err := uuid.Parse(id)
		require.NoError(t, err)
		require.Equal(t, uuid.Version(4), parsed.Version())
		require.Equal(t, uuid.RFC4122, parsed.Variant())
		require.False(t, seen[id])
		seen[id] = true
	}
}

func BenchmarkPost(b *testing.B) {
	box := newInbox(func(Event) {})
	for range b.N {
		_, _ = box.Post(event.UserMessage{})
		box.Cancel(agent.CancelCause{Kind: agent.CauseUser}, false)
	}
}

func TestASteadyStreamReusesTheQueueBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "first")
		synctest.Wait()
		post(t, b, "second") // from now on one message always waits
		for i := range 1000 {
			post(t, b, strconv.Itoa(i))
			b.EndTurn()
			synctest.Wait()
		}
		require.Len(t, r.claimed(), 1001)
		require.Equal(t, 1, b.queueLen())
		b.mu.Lock()
		require.LessOrEqual(t, cap(b.queue), 4, "the spent front is reused, the buffer does not grow")
		b.mu.Unlock()
		b.EndTurn()
	})
}

// Init readies an Inbox held inside another struct: it runs and reports
// turns.
func TestInitReadiesAnEmbeddedInbox(t *testing.T) {
	var owner struct {
		name string
		box  Inbox
	}
	r := &recorder{autoEnd: true}
	owner.box.Init(r.observe)
	r.box = &owner.box
	Mailbox(&owner.box).RegisterHandlers(r, actor.NewDefaultDispatcher(DefaultThroughput))
	post(t, &owner.box, "m1")
	require.NoError(t, owner.box.WhenIdle(context.Background()))
	require.Equal(t, []string{"m1"}, r.claimed())
	require.Contains(t, r.eventLog(), "inbox/enqueue m1")

}

// TestClaimCauseIsTheFirstCancel: a claim's Cause is the cause its context
// reports, the first one it was cancelled with; none before a cancel, nor
// after a turn that simply ended.
func TestClaimCauseIsTheFirstCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		synctest.Wait()
		claim := r.claims[0]
		_, cancelled := claim.Cause()
		require.False(t, cancelled)
		b.Cancel(agent.CancelCause{Kind: agent.CauseUser}, true)
		b.Close(agent.CancelCause{Kind: agent.CauseDisposed})
		cause, cancelled := claim.Cause()
		require.True(t, cancelled)
		require.Equal(t, agent.CancelCause{Kind: agent.CauseUser}, cause)
		require.Equal(t, cause, context.Cause(claim.Context()), "the context keeps the same first cause")
		b.EndTurn()

		b, r = newRecorded(false)
		post(t, b, "b")
		synctest.Wait()
		b.EndTurn()
		_, cancelled = r.claims[0].Cause()
		require.False(t, cancelled, "a turn that ended by itself was not cancelled")
		require.ErrorIs(t, r.claims[0].Context().Err(), context.Canceled, "its context is released")
	})
}

// TestCancelRacingATurnsEnd: a Cancel racing the end of the running turn
// (after which the next message is claimed) cancels at most one turn, the
// one claimed when it took the lock: the ending turn (its cause recorded),
// the next one, or none when it fell between the two claims.
func TestCancelRacingATurnsEnd(t *testing.T) {
	user := agent.CancelCause{Kind: agent.CauseUser}
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			b, r := newRecorded(false)
			post(t, b, "a")
			post(t, b, "b")
			synctest.Wait()
			var wg sync.WaitGroup
			wg.Go(func() { b.Cancel(user, true) })
			wg.Go(b.EndTurn)
			wg.Wait()
			synctest.Wait()
			require.Equal(t, []string{"a", "b"}, r.claimed())
			first, firstCancelled := r.claims[0].Cause()
			next, nextCancelled := r.claims[1].Cause()
			require.False(t, firstCancelled && nextCancelled, "at most one turn is cancelled")
			if nextCancelled {
				require.Equal(t, user, next)
				require.Equal(t, user, context.Cause(r.claims[1].Context()))
			} else {
				require.NoError(t, r.claims[1].Context().Err(), "the next turn runs on")
			}
			if firstCancelled {
				require.Equal(t, user, first)
			}
			b.EndTurn()
		})
	}
}

func TestACauseWithAReasonReachesTheTurnWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, r := newRecorded(false)
		post(t, b, "a")
		synctest.Wait()
		hook := agent.CancelCause{Kind: agent.CauseHook, Reason: "budget"}
		b.Cancel(hook, true)
		cause, cancelled := r.claims[0].Cause()
		require.True(t, cancelled)
		require.Equal(t, hook, cause)
		require.Equal(t, hook, context.Cause(r.claims[0].Context()))
		b.EndTurn()
	})
}
