package actorkit

import (
	"context"
	"errors"

	"github.com/dsh-actors/dsh-actors/fault"
)

// Cancellation returns err unchanged unless it is the end of the caller's
// own ctx (ctx is done and err matches context.Canceled or
// context.DeadlineExceeded) without being coded fault.Cancelled yet; then
// it is a fault.Cancelled *fault.Error with err's message, wrapping err (so
// errors.Is with the context error still holds). nil stays nil. The
// actors packages code every caller-side cancellation through it.
func Cancellation(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, fault.Cancelled) {
		return err
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fault.New(fault.Cancelled, err.Error(), err)
}
