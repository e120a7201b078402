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

// The accessors below are set by the package that defines the public type,
// at init; they take any because naming that type here would be an import
// cycle (that package imports this one).
var (
	// RuntimeSystem returns the actor system of an *actors.Runtime.
	RuntimeSystem func(runtime any) *actor.ActorSystem
	// ActivationPID returns the actor address of an *activation.Activation.
	ActivationPID func(activation any) *actor.PID
	// InboxMailbox returns an *inbox.Inbox as its actor's mailbox.
	InboxMailbox func(inbox any) actor.Mailbox
	// InsideDelivery reports whether the calling goroutine is inside an
	// inbox's Observer call (of any inbox).
	InsideDelivery func() bool
	// OnFenced makes fn what an *activation.Activation calls once its
	// session's lease was fenced (an append refused, or a renewal that
	// found the lease lost) and its cancelled turn has ended (replacing
	// any earlier fn): the owner of the agent then disposes it. fn runs
	// on the goroutine that saw the agent idle and must not block.
	OnFenced func(activation any, fn func())
)
