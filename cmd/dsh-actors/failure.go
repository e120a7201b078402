package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/dsh-actors/dsh-actors/fault"
)

// failure prints a failed command on stderr as "dsh-actors NAME: CODE:
// message" (just "dsh-actors NAME: message" when the error carries no
// code) and returns exit status 1. Every exit-1 failure of the CLI goes
// through it.
func failure(stderr io.Writer, name string, err error) int {
	if code := codeOf(err); code != "" {
		fmt.Fprintf(stderr, "dsh-actors %s: %s: %v\n", name, code, err)
	} else {
		fmt.Fprintf(stderr, "dsh-actors %s: %v\n", name, err)
	}
	return 1
}

// codeOf is the code of the outermost coded error in err's tree (walked
// depth-first, in order): a session query, subagent or actors error;
// except that a lease held by another process is LEASE_HELD whatever
// wraps it (AGENT_START_FAILED, say), the one code that says what to do:
// retry once that process let the session go. An error without one that
// is a cancellation gets CANCELLED, the subagent layer's code for an
// operation its context cancelled; otherwise "".
func codeOf(err error) string {
	if errors.Is(err, fault.LeaseHeld) {
		return string(fault.LeaseHeld)
	}
	if code := carriedCode(err); code != "" {
		return code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return string(fault.Cancelled)
	}
	return ""
}

func carriedCode(err error) string {
	switch e := err.(type) {
	case nil:
		return ""
	case interface{ ErrorCode() string }: // the model client's failures
		return e.ErrorCode()
	case *fault.Error:
		return string(e.Code)
	case interface{ Unwrap() error }:
		return carriedCode(e.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if code := carriedCode(inner); code != "" {
				return code
			}
		}
	}
	return ""
}

// persistenceFailed gives a store error that carries no code the query
// layer's SESSION_QUERY_PERSISTENCE_FAILED, with what as the message's
// head ("session persistence listing failed", the query's own words for a
// store it cannot list).
func persistenceFailed(what string, err error) error {
	return &fault.Error{Code: fault.QueryPersistenceFailed, Message: what + ": " + err.Error(), Cause: err}
}

// checkStoreRoot fails, as a persistence failure, when root cannot be a
// session store (it exists and is not a folder); stress checks it before
// its run opens the store. A missing root is fine.
func checkStoreRoot(root string) error {
	if err := requireFolder(root); err != nil {
		return persistenceFailed("session persistence failed", err)
	}
	return nil
}

// requireStore fails when root, the store a reading command (list, show,
// send) opens, does not exist, naming it: a mistyped --store is otherwise
// reported as the session not being found.
func requireStore(root string) error {
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store %q does not exist (--store names the folder serve or demo wrote; default %s)", root, defaultStore())
	}
	return nil
}
