package actorkit

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/fault"
)

func TestCancellationCodesOnlyTheCallersOwnCancellation(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	wrapped := fmt.Errorf("actors: create agent \"a\" failed: %w", context.Canceled)
	err := Cancellation(done, wrapped)
	require.ErrorIs(t, err, fault.Cancelled)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, wrapped.Error(), err.Error())

	already := fault.New(fault.Cancelled, "subagent listing was cancelled", context.Canceled)
	require.Same(t, already, Cancellation(done, already))
	other := errors.New("disk gone")
	require.Same(t, other, Cancellation(done, other))
	require.Same(t, wrapped, Cancellation(context.Background(), wrapped), "a context error while the caller's ctx is live is not the caller's")
	require.NoError(t, Cancellation(done, nil))
}
