package query

import (
	"context"
	"errors"
	"github.com/dsh-actors/dsh-actors/fault"
	"testing"

	"github.com/stretchr/testify/require"
)

func requireCancelled(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, fault.Cancelled)
	require.ErrorIs(t, err, context.Canceled)
	require.EqualError(t, err, "subagent listing was cancelled")
}

func twoChildWorld(t *testing.T) *world {
	w := parentWorld(t)
	w.authorChild("first", "parent", 2, "1")
	w.authorChild("second", "parent", 3, "2")
	return w
}

func TestStopsAtTheBetweenCandidatesCheckpoint(t *testing.T) {
	w := twoChildWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fq := &faultQuerier{inner: w.q, onListEvents: func(_ context.Context, _ string, next func() (*eventList, error)) (*eventList, error) {
		records, err := next()
		cancel()
		return records, err
	}}
	entries, err := ListChildren(ctx, fq, "parent")
	requireCancelled(t, err)
	require.Nil(t, entries)
	_, lists, _ := fq.calls()
	require.Equal(t, 1, lists)
}

func TestForwardsCancellationToTheTrace(t *testing.T) {
	w := twoChildWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fq := &faultQuerier{inner: w.q, onTrace: func(got context.Context, _ string, _ func() (*lineage, error)) (*lineage, error) {
		cancel()
		<-got.Done() // the caller's cancellation reaches the trace
		return nil, errors.New("query trace aborted")
	}}
	_, err := ListChildren(ctx, fq, "parent")
	requireCancelled(t, err)
}

func TestForwardsCancellationToTheExactDescriptorRead(t *testing.T) {
	w := twoChildWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fq := &faultQuerier{inner: w.q, onReadEvent: func(got context.Context, _ readRequest, _ func() (*eventWindow, error)) (*eventWindow, error) {
		cancel()
		<-got.Done()
		return nil, errors.New("read aborted")
	}}
	_, err := ListChildren(ctx, fq, "parent")
	requireCancelled(t, err)
	_, _, reads := fq.calls()
	require.Equal(t, 1, reads)
}

func TestStopsAfterASuccessfulExactReadWhenCancelledDuringIt(t *testing.T) {
	w := twoChildWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fq := &faultQuerier{inner: w.q, onReadEvent: func(_ context.Context, _ readRequest, next func() (*eventWindow, error)) (*eventWindow, error) {
		win, err := next()
		cancel()
		return win, err
	}}
	_, err := ListChildren(ctx, fq, "parent")
	requireCancelled(t, err)
	_, _, reads := fq.calls()
	require.Equal(t, 1, reads)
}

func TestAMappableFailureDuringCancellationIsNotASuccess(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("only", "parent", 2, "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fq := &faultQuerier{inner: w.q, onListEvents: func(context.Context, string, func() (*eventList, error)) (*eventList, error) {
		cancel()
		return nil, newError(fault.QueryPersistenceFailed, "failed", nil)
	}}
	_, err := ListChildren(ctx, fq, "parent")
	requireCancelled(t, err)
}

func TestAPreCancelledContextStopsBeforeAnyQuery(t *testing.T) {
	w := twoChildWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fq := &faultQuerier{inner: w.q}
	_, err := ListChildren(ctx, fq, "parent")
	requireCancelled(t, err)
	traces, lists, reads := fq.calls()
	require.Zero(t, traces+lists+reads)
}

func TestCancellationWithTheRealQueryNeverReturnsAPartialList(t *testing.T) {
	for calls := 1; calls <= 5; calls++ { // cancel at each successive query call
		w := twoChildWorld(t)
		ctx, cancel := context.WithCancel(context.Background())
		seen := 0
		tick := func() {
			if seen++; seen == calls {
				cancel()
			}
		}
		fq := &faultQuerier{
			inner: w.q,
			onTrace: func(_ context.Context, _ string, next func() (*lineage, error)) (*lineage, error) {
				tick()
				return next()
			},
			onListEvents: func(_ context.Context, _ string, next func() (*eventList, error)) (*eventList, error) {
				tick()
				return next()
			},
			onReadEvent: func(_ context.Context, _ readRequest, next func() (*eventWindow, error)) (*eventWindow, error) {
				tick()
				return next()
			},
		}
		_, err := ListChildren(ctx, fq, "parent")
		requireCancelled(t, err)
		cancel()
	}
}
