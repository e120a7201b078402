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

func closedFor(id string) error {
	return fault.New(fault.RegistryClosed, "actors: registry is closed; agent \""+id+"\" not started", nil)
}

// startFailed wraps the cause of a failed create or resume (op).
func startFailed(op, id string, err error) error {
	message := "actors: " + op + " agent \"" + id + "\" failed"
	if err != nil {
		message += ": " + err.Error()
	}
	return fault.New(fault.AgentStartFailed, message, err)
}
