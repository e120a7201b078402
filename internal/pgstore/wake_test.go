package pgstore

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// wakeBound is the most a test waits for a wake before it fails.
const wakeBound = time.Minute

// listener is a Listen running on a store until the test ends: its
// listening calls and its wakes, in order.
type listener struct {
	t         *testing.T
	listening chan struct{}
	wakes     chan string
}

// listen starts s's Listen and waits until it listens.
func listen(t *testing.T, s *Store) *listener {
	t.Helper()
	in, ok := session.InboxOf(s)
	require.True(t, ok)
	w, ok := in.(session.Waker)
	require.True(t, ok, "the Postgres inbox wakes")
	return listenWith(t, w.Listen)
}

// listenTopLevel starts s's ListenTopLevel and waits until it listens.
func listenTopLevel(t *testing.T, s *Store) *listener {
	t.Helper()
	return listenWith(t, durableInbox{s}.ListenTopLevel)
}

// listenWith starts a listen function and waits until it listens.
func listenWith(t *testing.T, listen func(ctx context.Context, listening func(), wake func(id string)) error) *listener {
	t.Helper()
	l := &listener{t: t, listening: make(chan struct{}, 16), wakes: make(chan string, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- listen(ctx, func() { l.listening <- struct{}{} }, func(id string) { l.wakes <- id }) }()
	t.Cleanup(func() {
		cancel()
		require.ErrorIs(t, <-done, context.Canceled, "Listen returns once its context is done")
	})
	l.awaitListening()
	return l
}

func (l *listener) awaitListening() {
	l.t.Helper()
	select {
	case <-l.listening:
	case <-time.After(wakeBound):
		l.t.Fatal("the listener never listened")
	}
}

// next is the next wake.
func (l *listener) next() string {
	l.t.Helper()
	select {
	case id := <-l.wakes:
		return id
	case <-time.After(wakeBound):
		l.t.Fatal("no wake came")
		return ""
	}
}

// family creates the parent "p" and its children on s and returns the
// epoch of the lease it takes on "p".
func family(t *testing.T, s *Store, children ...string) session.Epoch {
	t.Helper()
	require.NoError(t, s.Create(ctx, storetest.Header("p", ""), nil))
	for _, c := range children {
		require.NoError(t, s.Create(ctx, storetest.Header(c, "p"), nil))
	}
	epoch, err := s.Acquire(ctx, "p")
	require.NoError(t, err)
	return epoch
}

// An admission on one store wakes the listener of another store on the
// same database, at its commit, with the session's id; a duplicate
// admission wakes nothing (the next wake is the next admission's).
func TestAnAdmissionWakesTheListenersOfOtherStores(t *testing.T) {
	dsn := cluster.Database(t)
	sender, other := openStore(t, dsn, WithOwner("sender")), openStore(t, dsn, WithOwner("other"))
	l := listen(t, other)
	in, _ := session.InboxOf(sender)
	epoch := family(t, sender, "c1", "c2")

	_, err := in.Admit(ctx, "c1", storetest.Message("m1", "p", epoch))
	require.NoError(t, err)
	require.Equal(t, "c1", l.next())
	fresh, err := in.Admit(ctx, "c1", storetest.Message("m1", "p", epoch))
	require.NoError(t, err)
	require.False(t, fresh)
	_, err = in.Admit(ctx, "c2", storetest.Message("m2", "p", epoch+1))
	require.Error(t, err, "a refused admission")
	_, err = in.Admit(ctx, "c2", storetest.Message("m3", "p", epoch))
	require.NoError(t, err)
	require.Equal(t, "c2", l.next(), "neither the duplicate nor the refusal woke anyone")
}

// Listen calls listening only once its catch-up sweep has run: the wake
// no one heard (an orphan's) comes first, and an admission made once
// listening was called is woken by its own commit only, never again by a
// sweep that ran after it.
func TestListeningIsCalledOnceTheCatchUpSweepHasRun(t *testing.T) {
	dsn := cluster.Database(t)
	sender, other := openStore(t, dsn, WithOwner("sender")), openStore(t, dsn, WithOwner("other"))
	in, _ := session.InboxOf(sender)
	epoch := family(t, sender, "missed", "during", "after")
	_, err := in.Admit(ctx, "missed", storetest.Message("m1", "p", epoch)) // no one listens yet
	require.NoError(t, err)

	waker, _ := session.InboxOf(other)
	admitted := make(chan error, 1)
	var once sync.Once
	l := listenWith(t, func(ctx context.Context, listening func(), wake func(id string)) error {
		return waker.(session.Waker).Listen(ctx, func() {
			once.Do(func() {
				_, err := in.Admit(ctx, "during", storetest.Message("m2", "p", epoch))
				admitted <- err
			})
			listening()
		}, wake)
	})
	require.NoError(t, testkit.Receive(t, admitted, "the admission made in the listening callback"))
	require.Equal(t, "missed", l.next(), "the sweep's wake of what no one heard")
	require.Equal(t, "during", l.next())
	_, err = in.Admit(ctx, "after", storetest.Message("m3", "p", epoch))
	require.NoError(t, err)
	require.Equal(t, "after", l.next(), "the admission made while listening was woken once")
}

// A user's prompt admitted to a top-level session wakes the top-level
// listeners of every store, not the children's; an admission to a child
// wakes the children's, not the top-level ones; a release of a top-level
// session with prompts pending wakes it on the top-level channel.
func TestTopLevelSessionsWakeOnTheirOwnChannel(t *testing.T) {
	dsn := cluster.Database(t)
	holder, other := openStore(t, dsn, WithOwner("holder")), openStore(t, dsn, WithOwner("other"))
	children, top := listen(t, other), listenTopLevel(t, other)
	in, _ := session.InboxOf(holder)
	pe := family(t, holder, "c")

	_, err := in.Admit(ctx, "c", storetest.Message("m1", "p", pe))
	require.NoError(t, err)
	require.Equal(t, "c", children.next())
	_, err = in.Admit(ctx, "p", storetest.Message("u1", "", 0))
	require.NoError(t, err)
	require.Equal(t, "p", top.next())
	require.NoError(t, holder.Release(ctx, "p", pe))
	require.Equal(t, "p", top.next(), "released with a prompt pending")
	_, err = in.Admit(ctx, "c", storetest.Message("m2", "p", pe))
	require.Error(t, err, "the parent's lease ended")
	epoch, err := holder.Acquire(ctx, "p")
	require.NoError(t, err)
	_, err = in.Admit(ctx, "c", storetest.Message("m3", "p", epoch))
	require.NoError(t, err)
	require.Equal(t, "c", children.next(), "no top-level wake reached the children's listener")
	select {
	case id := <-top.wakes:
		t.Fatalf("a child's admission woke the top-level listener with %q", id)
	default:
	}
}

// A holder that releases a session with pending messages (admitted while
// it was leaving) wakes it; a release with none pending wakes nothing.
func TestAReleaseWithPendingMessagesWakesTheSession(t *testing.T) {
	dsn := cluster.Database(t)
	holder, other := openStore(t, dsn, WithOwner("holder")), openStore(t, dsn, WithOwner("other"))
	in, _ := session.InboxOf(holder)
	pe := family(t, holder, "idle", "busy")
	idle, err := holder.Acquire(ctx, "idle")
	require.NoError(t, err)
	busy, err := holder.Acquire(ctx, "busy")
	require.NoError(t, err)
	_, err = in.Admit(ctx, "busy", storetest.Message("m1", "p", pe))
	require.NoError(t, err)

	l := listen(t, other)
	require.NoError(t, holder.Release(ctx, "idle", idle))
	require.NoError(t, holder.Release(ctx, "busy", busy))
	require.Equal(t, "busy", l.next(), "only the session with a pending message is woken")
}

// A wake nobody heard (no listener at the admission) is repeated for a
// session no one holds live, not for one whose holder is live (that
// holder runs its messages), as Orphaned tells for one session: by a
// listener when it starts listening, by the sweep, and by the listener
// that comes back after its connection died, without a sweep.
func TestLostWakesAreRepeatedOnListeningByTheSweepAndAfterAReconnection(t *testing.T) {
	dsn := cluster.Database(t)
	sender, sweeper := openStore(t, dsn, WithOwner("sender")), openStore(t, dsn, WithOwner("sweeper"))
	in, _ := session.InboxOf(sender)
	pe := family(t, sender, "held", "orphan")
	_, err := sender.Acquire(ctx, "held")
	require.NoError(t, err)
	for _, c := range []string{"held", "orphan"} {
		_, err = in.Admit(ctx, c, storetest.Message(c+"-m", "p", pe))
		require.NoError(t, err)
	}

	w := in.(session.Waker)
	for id, want := range map[string]bool{"held": false, "orphan": true, "p": false} {
		orphaned, err := w.Orphaned(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, orphaned, id)
	}
	l := listen(t, sweeper)
	require.Equal(t, "orphan", l.next(), "a listener wakes on its first connection what was sent before it listened")
	_, err = sweeper.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, "orphan", l.next(), "a sweep wakes it again")

	conn := connect(t, dsn)
	var killed int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE query = 'LISTEN `+wakeChannel+`') k`).Scan(&killed))
	require.Equal(t, 1, killed, "the listener's connection")
	l.awaitListening()
	require.Equal(t, "orphan", l.next(), "the reconnected listener wakes what it may have missed")
}

// records is a slog handler that sends every record it handles.
type records chan slog.Record

func (r records) Enabled(context.Context, slog.Level) bool { return true }
func (r records) Handle(_ context.Context, rec slog.Record) error {
	r <- rec.Clone()
	return nil
}
func (r records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r records) WithGroup(string) slog.Handler      { return r }

// attr is rec's attribute key as a string ("" when absent).
func attr(rec slog.Record, key string) string {
	var v string
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
		}
		return true
	})
	return v
}

// The listener logs its connection's failure once at Warn with the error
// and the backoff before the next attempt, and its recovery at Info.
func TestTheListenerLogsItsConnectionFailureAndRecovery(t *testing.T) {
	dsn := cluster.Database(t)
	logged := make(records, 16)
	s := openStore(t, dsn, WithLogger(slog.New(logged)))
	l := listen(t, s)
	require.Empty(t, logged, "nothing to log while connected")
	conn := connect(t, dsn)
	_, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN `+wakeChannel+`'`)
	require.NoError(t, err)
	l.awaitListening()
	failed := <-logged
	require.Equal(t, slog.LevelWarn, failed.Level)
	require.NotEmpty(t, attr(failed, "err"))
	require.Equal(t, listenBackoffMin.String(), attr(failed, "retryIn"))
	recovered := <-logged
	require.Equal(t, slog.LevelInfo, recovered.Level)
	require.Equal(t, "1", attr(recovered, "failedAttempts"))
	require.Empty(t, logged)
}
