package agent

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// CauseOf finds a CancelCause whether it is the error itself (the fast
// path, no unwrapping), wrapped in it, or the cause of a context cancelled
// with it; any other error carries none.
func TestCauseOf(t *testing.T) {
	hook := CancelCause{Kind: CauseHook, Reason: "budget exhausted"}
	parent := CancelCause{Kind: CauseParent}

	cancelledWith := func(cause error) error {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return context.Cause(ctx)
	}

	for _, tc := range []struct {
		name string
		err  error
		want CancelCause
		ok   bool
	}{
		{name: "bare cause", err: hook, want: hook, ok: true},
		{name: "bare cause without reason", err: parent, want: parent, ok: true},
		{name: "wrapped with %w", err: fmt.Errorf("turn: %w", parent), want: parent, ok: true},
		{name: "wrapped twice", err: fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", hook)), want: hook, ok: true},
		{name: "joined", err: errors.Join(errors.New("other"), hook), want: hook, ok: true},
		{name: "context.Cause of a context cancelled with a cause", err: cancelledWith(hook), want: hook, ok: true},
		{name: "context.Cause of a context cancelled with a wrapped cause", err: cancelledWith(fmt.Errorf("w: %w", parent)), want: parent, ok: true},
		{name: "context.Cause of a context cancelled without a cause", err: cancelledWith(nil), ok: false},
		{name: "unrelated error", err: errors.New("turn cancelled: parent"), ok: false},
		{name: "context.Canceled", err: context.Canceled, ok: false},
		{name: "cause formatted with %v is lost", err: fmt.Errorf("turn: %v", parent), ok: false},
		{name: "nil", err: nil, ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := CauseOf(tc.err)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got, "the cause found, or the zero CancelCause")
		})
	}
}
