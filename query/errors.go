package query

import (
	"context"

	"github.com/dsh-actors/dsh-actors/fault"
)

// newError is the query's *fault.Error.
func newError(code fault.Code, message string, cause error) *fault.Error {
	return fault.New(code, message, cause)
}

func sessionNotFound(id string) error {
	return newError(fault.QuerySessionNotFound, `session "`+id+`" not found`, nil)
}

// cancelled reports ctx's reason exactly when ctx is done (the original
// rejects with the signal's reason, not a query error), else nil.
func cancelled(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}
