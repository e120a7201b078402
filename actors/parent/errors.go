package parent

import (
	"strconv"

	"github.com/dsh-actors/dsh-actors/actors/activation"
)

// Codes of the registry's errors (type *activation.Error).
const (
	CodeNotFound    = "AGENT_NOT_FOUND"
	CodeExists      = "AGENT_EXISTS"
	CodeStale       = "STALE_HANDLE"
	CodeClosed      = "REGISTRY_CLOSED"
	CodeStartFailed = "AGENT_START_FAILED"
)

// Sentinels for errors.Is.
var (
	// ErrNotFound: no agent is live under the id.
	ErrNotFound = &activation.Error{Code: CodeNotFound, Message: "actors: agent not found"}
	// ErrExists: the id is live, or being created or resumed, already.
	ErrExists = &activation.Error{Code: CodeExists, Message: "actors: agent already exists"}
	// ErrStale: the id is live under another incarnation.
	ErrStale = &activation.Error{Code: CodeStale, Message: "actors: stale agent handle"}
	// ErrClosed: the registry no longer creates or resumes agents.
	ErrClosed = &activation.Error{Code: CodeClosed, Message: "actors: registry is closed"}
	// ErrStartFailed: creating or resuming an agent failed and was rolled
	// back; the cause (a session error, say) is wrapped.
	ErrStartFailed = &activation.Error{Code: CodeStartFailed, Message: "actors: agent start failed"}
)

func notFound(id string) error {
	return &activation.Error{Code: CodeNotFound, Message: "actors: agent \"" + id + "\" is not live"}
}

func exists(id string) error {
	return &activation.Error{Code: CodeExists, Message: "actors: agent \"" + id + "\" already exists"}
}

func stale(id string, incarnation, live uint64) error {
	return &activation.Error{Code: CodeStale, Message: "actors: agent \"" + id + "\" incarnation " +
		strconv.FormatUint(incarnation, 10) + " is stale (live incarnation " + strconv.FormatUint(live, 10) + ")"}
}

func closedFor(id string) error {
	return &activation.Error{Code: CodeClosed, Message: "actors: registry is closed; agent \"" + id + "\" not started"}
}

// startFailed wraps the cause of a failed create or resume (op).
func startFailed(op, id string, err error) error {
	return &activation.Error{Code: CodeStartFailed, Message: "actors: " + op + " agent \"" + id + "\" failed", Err: err}
}
