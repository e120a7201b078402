package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// WaitEnd consumes one ChildEnded per epoch, whether the end came
// before or after the call, and gives up when its context ends.
func TestWaitEndConsumesOneNoticePerEpoch(t *testing.T) {
	ctx := context.Background()
	w, err := OpenWorld(ctx, t.TempDir(), false)
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close(ctx)) }()

	id, err := w.Start(ctx, w.Parent, "reply one")
	require.NoError(t, err)
	require.NoError(t, w.WaitEnd(ctx, id), "the first epoch's end")

	waited := make(chan error, 1)
	go func() { waited <- w.WaitEnd(ctx, id) }() // waits for the next epoch
	require.NoError(t, w.Followup(ctx, id, "reply two"))
	require.NoError(t, <-waited, "the cold-resumed epoch's end")

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, w.WaitEnd(short, id), context.DeadlineExceeded, "no third epoch")
}
