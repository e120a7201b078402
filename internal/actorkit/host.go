package actorkit

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// Host is where agent actors are spawned: the actor system, the dispatcher
// running their mailboxes (nil: protoactor's default) and their guardian
// strategy (nil: StopStrategy over the spawner's logger).
type Host struct {
	System     *actor.ActorSystem
	Dispatcher actor.Dispatcher
	Supervisor actor.SupervisorStrategy
}

// NewSystem returns an actor system whose logs go to logger through
// LoggerFactory (nil discards them).
func NewSystem(logger *slog.Logger) *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(LoggerFactory(logger)))
}

// Ref is the address of an agent's actor, as the packages that spawn,
// watch and stop agents pass it among themselves.
type Ref = *actor.PID

// Mailbox is an agent's inbox as the mailbox of its actor.
type Mailbox = actor.Mailbox
