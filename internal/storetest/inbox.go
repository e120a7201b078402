package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// inboxOf is the durable inbox of s; the suite's stores all have one.
func inboxOf(t *testing.T, s session.Fenced) session.DurableInbox {
	t.Helper()
	in, ok := session.InboxOf(s)
	require.True(t, ok, "the store has a durable inbox")
	return in
}

// Message is a user message with id as an admission from parent at epoch.
func Message(id, from string, epoch session.Epoch) session.Admission {
	body, err := vocab.Encode(event.UserMessage{Role: event.RoleUser, ID: id, Content: []event.Block{}, Source: event.Source{Kind: event.SourceUser}})
	if err != nil {
		panic(err)
	}
	return session.Admission{MessageID: id, From: from, FromEpoch: epoch, Body: body}
}

// claimEvent is the user/message event at seq that claims the message id.
func claimEvent(seq int64, id string) session.Event {
	body := Message(id, "", 0).Body
	return session.Event{Type: vocab.TypeUserMessage, Seq: seq, Time: 1785544945198 + seq, Data: body, SurfaceOp: json.RawMessage(`"append"`)}
}

func pendingIDs(t *testing.T, in session.DurableInbox, id string) []string {
	t.Helper()
	pending, err := in.Pending(ctx, id)
	require.NoError(t, err)
	ids := []string{}
	for _, p := range pending {
		ids = append(ids, p.MessageID)
	}
	return ids
}

// family creates parent p and its child c, and leases p.
func family(t *testing.T, s session.Fenced) session.Epoch {
	t.Helper()
	require.NoError(t, s.Create(ctx, Header("p", ""), nil))
	require.NoError(t, s.Create(ctx, Header("c", "p"), nil))
	epoch, err := s.Acquire(ctx, "p")
	require.NoError(t, err)
	return epoch
}

// inboxAdmitAndClaim: admissions are pending in admission order across
// handles, a duplicate id writes nothing, the append of a message's
// user/message event claims it, a discard settles it, and what is left
// is pending for another handle (a restarted process).
func inboxAdmitAndClaim(t *testing.T, open func() session.Fenced) {
	s := open()
	in := inboxOf(t, s)
	pe := family(t, s)
	for _, id := range []string{"m1", "m2", "m3", "m4"} {
		fresh, err := in.Admit(ctx, "c", Message(id, "p", pe))
		require.NoError(t, err)
		require.True(t, fresh)
	}
	fresh, err := in.Admit(ctx, "c", Message("m2", "p", pe))
	require.NoError(t, err)
	require.False(t, fresh, "a duplicate delivery is acknowledged and writes nothing")
	require.Equal(t, []string{"m1", "m2", "m3", "m4"}, pendingIDs(t, in, "c"))

	ce, err := s.Acquire(ctx, "c")
	require.NoError(t, err)
	require.NoError(t, s.AppendFenced(ctx, "c", ce, []session.Event{Note(0, "turn"), claimEvent(1, "m1")}))
	require.NoError(t, inboxOf(t, s).Discard(ctx, "c", ce, []string{"m3"}))
	require.Equal(t, []string{"m2", "m4"}, pendingIDs(t, in, "c"))
	require.ErrorIs(t, in.Discard(ctx, "c", ce+7, []string{"m2"}), fault.Fenced, "a discard under a stale epoch")
	require.NoError(t, s.Release(ctx, "c", ce))
	require.Equal(t, []string{"m2", "m4"}, pendingIDs(t, inboxOf(t, open()), "c"), "another process sees the same inbox")
}

// inboxAuthority: only the exact live parent at its current epoch is
// admitted; every refusal is typed and writes nothing; a parent whose
// epoch is not its live lease is also told it is fenced.
func inboxAuthority(t *testing.T, open func() session.Fenced) {
	s := open()
	in := inboxOf(t, s)
	pe := family(t, s)
	require.NoError(t, s.Create(ctx, Header("stranger", ""), nil))
	se, err := s.Acquire(ctx, "stranger")
	require.NoError(t, err)
	_, err = in.Admit(ctx, "c", Message("x1", "p", pe+5))
	require.ErrorIs(t, err, fault.Unauthorized, "another epoch of the parent")
	require.ErrorIs(t, err, fault.Fenced, "another epoch of the parent: its sender's lease is gone")
	_, err = in.Admit(ctx, "c", Message("x2", "stranger", se))
	require.ErrorIs(t, err, fault.Unauthorized, "a live session that is not the parent")
	require.NotErrorIs(t, err, fault.Fenced, "a stranger's lease is live: it has no authority")
	_, err = in.Admit(ctx, "missing", Message("x3", "p", pe))
	require.ErrorIs(t, err, session.ErrNotFound)
	require.NoError(t, s.Release(ctx, "p", pe))
	_, err = in.Admit(ctx, "c", Message("x4", "p", pe))
	require.ErrorIs(t, err, fault.Unauthorized, "the parent's lease ended")
	require.ErrorIs(t, err, fault.Fenced, "the parent's lease ended")
	require.Equal(t, []string{}, pendingIDs(t, in, "c"))
	require.NoError(t, s.Release(ctx, "stranger", se))
}

// inboxUserPrompt: a user's prompt (From "") is admitted to a top-level
// session whether its lease is held by another handle (another node) or
// by none, and is pending for every handle in admission order until the
// append of its user/message event claims it; a duplicate writes nothing;
// to a child it is fault.Unauthorized and writes nothing.
func inboxUserPrompt(t *testing.T, open func() session.Fenced) {
	s, other := open(), open()
	in := inboxOf(t, s)
	pe := family(t, s)
	fresh, err := inboxOf(t, other).Admit(ctx, "p", Message("u1", "", 0))
	require.NoError(t, err, "a prompt to a top-level session held by another handle")
	require.True(t, fresh)
	require.NoError(t, s.Release(ctx, "p", pe))
	fresh, err = in.Admit(ctx, "p", Message("u2", "", 0))
	require.NoError(t, err, "a prompt to a top-level session no one holds")
	require.True(t, fresh)
	fresh, err = in.Admit(ctx, "p", Message("u1", "", 0))
	require.NoError(t, err)
	require.False(t, fresh, "a duplicate delivery is acknowledged and writes nothing")
	_, err = in.Admit(ctx, "c", Message("u3", "", 0))
	require.ErrorIs(t, err, fault.Unauthorized, "a child takes messages from its parent only")
	require.Empty(t, pendingIDs(t, in, "c"))
	pending, err := inboxOf(t, other).Pending(ctx, "p")
	require.NoError(t, err)
	require.Len(t, pending, 2)
	require.Equal(t, session.Admission{MessageID: "u1", Body: pending[0].Body}, pending[0], "no sender, no sender's epoch")
	require.Equal(t, "u2", pending[1].MessageID)
	epoch, err := other.Acquire(ctx, "p")
	require.NoError(t, err)
	require.NoError(t, other.AppendFenced(ctx, "p", epoch, []session.Event{claimEvent(0, "u1")}))
	require.Equal(t, []string{"u2"}, pendingIDs(t, in, "p"), "the append of its event claims a prompt")
	require.NoError(t, other.Release(ctx, "p", epoch))
}

// inboxDrainCutOff: a drain below the parent refuses admission to its
// children and grandchildren until the parent's lease ends; admissions
// racing the cut-off are each admitted (and pending) or refused with
// DRAINING, never both and never lost.
func inboxDrainCutOff(t *testing.T, open func() session.Fenced) {
	s := open()
	in := inboxOf(t, s)
	pe := family(t, s)
	require.NoError(t, s.Create(ctx, Header("g", "c"), nil))
	ce, err := s.Acquire(ctx, "c")
	require.NoError(t, err)

	const n = 24
	admitted := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("r%02d", i)
			_, err := in.Admit(ctx, "c", Message(id, "p", pe))
			if err == nil {
				admitted <- id
				return
			}
			require.ErrorIs(t, err, fault.Draining)
		}()
		if i == n/2 {
			require.NoError(t, in.CloseAdmission(ctx, "p", pe))
		}
	}
	wg.Wait()
	close(admitted)
	var ok []string
	for id := range admitted {
		ok = append(ok, id)
	}
	require.ElementsMatch(t, ok, pendingIDs(t, in, "c"), "every admitted message is pending, no refused one is")

	_, err = in.Admit(ctx, "c", Message("late", "p", pe))
	require.ErrorIs(t, err, fault.Draining)
	_, err = in.Admit(ctx, "g", Message("grandchild", "c", ce))
	require.ErrorIs(t, err, fault.Draining, "the cut-off covers every session below the parent")

	require.NoError(t, s.Release(ctx, "p", pe))
	again, err := s.Acquire(ctx, "p")
	require.NoError(t, err)
	_, err = in.Admit(ctx, "c", Message("after", "p", again))
	require.NoError(t, err, "the cut-off ended with the parent's lease")
	require.NoError(t, s.Release(ctx, "p", again))
	require.NoError(t, s.Release(ctx, "c", ce))
}

// inboxDrainCoversReleasedChildren: a drain's cut-off covers the sessions
// below the parent whatever their state: admissions to a child whose
// lease another handle (another node) held and released, and to that
// child's child, are DRAINING.
func inboxDrainCoversReleasedChildren(t *testing.T, open func() session.Fenced) {
	s, other := open(), open()
	in := inboxOf(t, s)
	pe := family(t, s)
	require.NoError(t, s.Create(ctx, Header("g", "c"), nil))
	for _, id := range []string{"g", "c"} {
		epoch, err := other.Acquire(ctx, id)
		require.NoError(t, err)
		require.NoError(t, other.Release(ctx, id, epoch))
	}
	require.NoError(t, in.CloseAdmission(ctx, "p", pe))
	_, err := in.Admit(ctx, "c", Message("to child", "p", pe))
	require.ErrorIs(t, err, fault.Draining)
	ce, err := s.Acquire(ctx, "c")
	require.NoError(t, err)
	_, err = in.Admit(ctx, "g", Message("to grandchild", "c", ce))
	require.ErrorIs(t, err, fault.Draining)
	require.Empty(t, pendingIDs(t, in, "c"))
	require.Empty(t, pendingIDs(t, in, "g"))
	require.NoError(t, s.Release(ctx, "c", ce))
	require.NoError(t, s.Release(ctx, "p", pe))
}
