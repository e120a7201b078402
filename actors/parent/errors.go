package parent

import (
	"strconv"

	"github.com/dsh-actors/dsh-actors/fault"
)

func notFound(id string) error {
	return fault.New(fault.AgentNotFound, "actors: agent \""+id+"\" is not live", nil)
}

func exists(id string) error {
	return fault.New(fault.AgentExists, "actors: agent \""+id+"\" already exists", nil)
}

func stale(id string, incarnation, live uint64) error {
	return fault.New(fault.StaleHandle, "actors: agent \""+id+"\" incarnation "+
		strconv.FormatUint(incarnation, 10)+" is stale (live incarnation "+strconv.FormatUint(live, 10)+")", nil)
}

// stoppedUnpublished is ACTIVATION_CLOSING for an agent whose actor
// stopped before it was published.
func stoppedUnpublished(id string) error {
	return fault.New(fault.ActivationClosing, "actors: agent \""+id+"\" stopped before it was published", nil)
}

func closedFor(id string) error {
	return fault.New(fault.RegistryClosed, "actors: registry is closed; agent \""+id+"\" not started", nil)
}

// startFailed wraps the cause of a failed create or resume (op); a cause
// that is NOT_RESUMABLE (no factory builds the agent's route) keeps its
// code.
func startFailed(op, id string, err error) error {
	message := "actors: " + op + " agent \"" + id + "\" failed"
	if err != nil {
		message += ": " + err.Error()
	}
	code := fault.AgentStartFailed
	if fault.CodeOf(err) == fault.NotResumable {
		code = fault.NotResumable
	}
	return fault.New(code, message, err)
}

// unbuildable is the refusal of an agent whose route the factory builds
// nothing for.
func unbuildable(id, provider, model string) error {
	return fault.New(fault.NotResumable, "actors: no agent factory builds agent \""+id+"\" of route "+
		strconv.Quote(provider+"/"+model), nil)
}
