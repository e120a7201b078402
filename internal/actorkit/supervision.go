package actorkit

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// StopStrategy returns the supervisor strategy agent actors are spawned
// under: a failing actor is stopped, never restarted, and the failure is
// logged at Error level. (Failures inside a turn never reach it: a turn's
// panic is recovered by the turn and logged as a failed turn.)
func StopStrategy(logger *slog.Logger) actor.SupervisorStrategy {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return stopStrategy{logger: logger}
}

type stopStrategy struct{ logger *slog.Logger }

// HandleFailure stops the failed child and reports why.
func (s stopStrategy) HandleFailure(system *actor.ActorSystem, supervisor actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	s.logger.Error("actors: agent actor failed; stopping it", "actor", child.String(), "reason", reason, "message", message)
	system.EventStream.Publish(&actor.SupervisorEvent{Child: child, Reason: reason, Directive: actor.StopDirective})
	supervisor.StopChildren(child)
}
