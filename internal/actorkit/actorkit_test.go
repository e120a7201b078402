package actorkit

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// panicky fails in its own Receive on every user message.
type panicky struct{ started *atomic.Int32 }

func (p panicky) Receive(c actor.Context) {
	switch c.Message().(type) {
	case *actor.Started:
		p.started.Add(1)
	case string:
		panic("receive bug")
	}
}

func TestStopStrategyStopsAndReportsInsteadOfRestarting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		system := actor.NewActorSystem(actor.WithLoggerFactory(LoggerFactory(nil)))
		defer system.Shutdown()
		var started atomic.Int32
		props := actor.PropsFromProducer(func() actor.Actor { return panicky{&started} }, actor.WithGuardian(StopStrategy(logger)))
		pid := system.Root.Spawn(props)
		system.Root.Send(pid, "boom")
		synctest.Wait()
		_, alive := system.ProcessRegistry.Get(pid)
		require.False(t, alive, "the failed actor was stopped")
		require.Equal(t, int32(1), started.Load(), "never restarted")
		require.Contains(t, logs.String(), "agent actor failed; stopping it")
		require.Contains(t, logs.String(), "receive bug")
	})
}

// spawner spawns a panicky child when told "spawn" and counts the
// Terminated of its children.
type spawner struct {
	child      actor.Producer
	children   chan *actor.PID
	terminated *atomic.Int32
}

func (p spawner) Receive(c actor.Context) {
	switch c.Message().(type) {
	case string:
		p.children <- c.Spawn(actor.PropsFromProducer(p.child))
	case *actor.Terminated:
		p.terminated.Add(1)
	}
}

// An agent actor spawned under another's (a continuable child under its
// parent's) that fails in its Receive is stopped by its parent's
// supervisor, never restarted with empty state; the failure is logged,
// and the parent keeps running and is told the child terminated.
func TestStopStrategyStopsAFailingChildAndKeepsItsParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		system := actor.NewActorSystem(actor.WithLoggerFactory(LoggerFactory(nil)))
		defer system.Shutdown()
		var started, terminated atomic.Int32
		children := make(chan *actor.PID, 1)
		parent := spawner{child: (&panickyProducer{&started}).produce, children: children, terminated: &terminated}
		props := actor.PropsFromProducer(func() actor.Actor { return parent },
			actor.WithSupervisor(StopStrategy(logger)), actor.WithGuardian(StopStrategy(logger)))
		pid := system.Root.Spawn(props)
		system.Root.Send(pid, "spawn")
		synctest.Wait()
		child := <-children
		system.Root.Send(child, "boom")
		synctest.Wait()
		_, alive := system.ProcessRegistry.Get(child)
		require.False(t, alive, "the failed child was stopped")
		require.Equal(t, int32(1), started.Load(), "never restarted")
		require.Equal(t, int32(1), terminated.Load(), "its parent was told")
		_, alive = system.ProcessRegistry.Get(pid)
		require.True(t, alive, "the parent runs on")
		require.Contains(t, logs.String(), "agent actor failed; stopping it")
		system.Root.Stop(pid)
		synctest.Wait()
	})
}

// panickyProducer makes panicky actors that share one start count.
type panickyProducer struct{ started *atomic.Int32 }

func (p *panickyProducer) produce() actor.Actor { return panicky{p.started} }

func TestLoggerFactoryDemotesProtoactorInfo(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		want  bool
	}{{slog.LevelInfo, false}, {slog.LevelDebug, true}} {
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: tc.level}))
		system := actor.NewActorSystem(actor.WithLoggerFactory(LoggerFactory(logger)))
		system.Shutdown()
		require.Equal(t, tc.want, strings.Contains(logs.String(), "actor system started"), logs.String())
		if tc.want {
			require.Contains(t, logs.String(), "level=DEBUG")
			require.Contains(t, logs.String(), "lib=protoactor")
		}
	}
}
