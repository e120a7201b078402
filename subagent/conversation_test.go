package subagent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// childOf runs a parent turn whose script starts one child ("spawned" or
// "forked" LABEL ID) and returns the child's id once its first epoch ended.
func (w *world) childOf(script, done string) string {
	w.t.Helper()
	w.turn(script)
	reply := lastReply(w.log("parent"))
	require.True(w.t, strings.HasPrefix(reply, done), reply)
	id := reply[strings.LastIndexByte(reply, ' ')+1:]
	w.ended(id, 1)
	return id
}

// A fork child's conversation holds its parent's completed turns, not the
// turn in flight that forked it, then its own prompt.
func TestAForkChildSeesItsParentsCompletedTurns(t *testing.T) {
	w := newWorld(t)
	w.turn("reply one")
	child := w.childOf("reply two\nfork twin: history", "forked twin ")
	require.Equal(t, "user: reply one\nassistant: one\nuser: history", lastReply(w.log(child)))
}

// A spawn child's conversation holds only its own messages.
func TestASpawnChildSeesOnlyItsOwnConversation(t *testing.T) {
	w := newWorld(t)
	w.turn("reply one")
	child := w.childOf("spawn solo: history", "spawned solo ")
	require.Equal(t, "user: history", lastReply(w.log(child)))
}

// A cold-resumed child's conversation holds every epoch in order, and
// reading it adds no read of the log to the one load the cold resume
// does (counted through the store seam).
func TestAColdResumedChildSeesEveryEpochWithoutASecondRead(t *testing.T) {
	store := newCountingStore(t)
	sessions := session.NewSessions(store)
	rt, err := actors.New(actors.Options{Sessions: sessions, Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(bg)) })
	s, err := New(rt, query.New(sessions))
	require.NoError(t, err)
	w := &world{t: t, rt: rt, s: s, events: record(s)}
	_, err = s.RegisterProvider(NewSpawn(rt))
	require.NoError(t, err)
	w.parent, err = rt.StartAgent(bg, parent.CreateSpec{Header: session.Header{ID: "parent"}})
	require.NoError(t, err)

	child := w.childOf("spawn kid: reply first", "spawned kid ")
	readsOf := func(text string, epoch int) int {
		require.Nil(t, rt.Sessions().Get(child), "the child settled and left: the follow-up cold-resumes it")
		before := store.reads(child)
		w.turn("send " + child + ": " + text)
		w.ended(child, epoch)
		return store.reads(child) - before
	}
	plain := readsOf("reply second", 2)
	withHistory := readsOf("history", 3)
	require.Equal(t, plain, withHistory, "reading the conversation reads no log")
	require.Equal(t, 1, plain, "a cold resume reads the log once")
	require.Equal(t, "user: reply first\nassistant: first\nuser: reply second\nassistant: second\nuser: history",
		lastReply(w.log(child)))
}

// countingStore counts the log reads (Load and Inspect) per session id.
type countingStore struct {
	session.Store
	mu    sync.Mutex
	count map[string]int
}

func newCountingStore(t *testing.T) *countingStore {
	t.Helper()
	store, err := session.OpenJSONL(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	return &countingStore{Store: store, count: map[string]int{}}
}

func (c *countingStore) reads(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[id]
}

func (c *countingStore) read(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count[id]++
}

func (c *countingStore) Load(ctx context.Context, id string) (*session.Log, error) {
	c.read(id)
	return c.Store.Load(ctx, id)
}

func (c *countingStore) Inspect(ctx context.Context, id string) (*session.Log, error) {
	c.read(id)
	return c.Store.Inspect(ctx, id)
}
