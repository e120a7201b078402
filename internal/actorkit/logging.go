package actorkit

import (
	"context"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// LoggerFactory returns a protoactor LoggerFactory (actor.WithLoggerFactory)
// writing to logger with the attribute lib=protoactor. Records below Warn
// are demoted to Debug, so protoactor's start-up and recovery chatter stays
// out of an Info log. A nil logger discards everything.
func LoggerFactory(logger *slog.Logger) func(*actor.ActorSystem) *slog.Logger {
	return func(system *actor.ActorSystem) *slog.Logger {
		if logger == nil {
			return slog.New(slog.DiscardHandler)
		}
		return slog.New(demote{logger.Handler()}).With("lib", "protoactor", "system", system.ID)
	}
}

// demote lowers Info records to Debug.
type demote struct{ slog.Handler }

// Enabled asks the wrapped handler about the demoted level.
func (d demote) Enabled(ctx context.Context, level slog.Level) bool {
	return d.Handler.Enabled(ctx, lowered(level))
}

// Handle passes the record on at its demoted level.
func (d demote) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lowered(r.Level)
	return d.Handler.Handle(ctx, r)
}

// WithAttrs keeps demoting below the attributes.
func (d demote) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demote{d.Handler.WithAttrs(attrs)}
}

// WithGroup keeps demoting below the group.
func (d demote) WithGroup(name string) slog.Handler { return demote{d.Handler.WithGroup(name)} }

func lowered(level slog.Level) slog.Level {
	if level < slog.LevelWarn {
		return slog.LevelDebug
	}
	return level
}
