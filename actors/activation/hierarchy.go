package activation

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
)

// An agent spawned under another is a protoactor child of the other's
// actor, so protoactor's own stop orders them: a stopping actor stops its
// children and finishes its own stop only once each child's Terminated
// has arrived. What a stop must still do after its children stopped (wait
// for the cancelled turn, flush, release the session) may block, so it
// cannot run in the Stopped handler, on a dispatcher worker, after which
// protoactor tells the parent at once. It runs in a release lane instead:
// one more child of the stopping actor, a process of ours that ends (and
// sends its Terminated) when the release step has returned, on a
// goroutine of its own. protoactor then finishes the stop as for any
// child.

// spawnRequest asks an agent's actor to spawn a child actor. It travels in
// the inbox's control lane, so it is handled also while a turn runs.
type spawnRequest struct {
	child *Activation
	name  string
	reply chan spawned
}

// spawned is a spawnRequest's answer.
type spawned struct {
	pid *actor.PID
	err error
}

// errParentStopping refuses a spawn under an agent whose actor is
// stopping: a child spawned after protoactor stopped the children would
// never be stopped, and the parent's stop would never end.
var errParentStopping = errors.New("the parent agent's actor is stopping")

// spawnChild spawns child's actor under a's, by a's own context, and
// returns the child's PID. It blocks until a's actor has handled the
// request (also during a turn) or refused it: once a is stopping, a
// spawn fails with fault.ActivationClosing.
func (a *Activation) spawnChild(child *Activation, name string) (*actor.PID, error) {
	req := &spawnRequest{child: child, name: name, reply: make(chan spawned, 1)}
	if !a.inbox.PostControl(req) {
		return nil, parentStopping(a.id())
	}
	r := <-req.reply
	return r.pid, r.err
}

// spawnRequested spawns the requested child, unless a is stopping.
func (a *Activation) spawnRequested(c actor.Context, req *spawnRequest) {
	if a.stopping {
		req.reply <- spawned{err: parentStopping(a.id())}
		return
	}
	k := req.child.kit
	pid, err := k.spawn(req.child, func() (*actor.PID, error) { return c.SpawnNamed(k.child, req.name) })
	req.reply <- spawned{pid: pid, err: err}
}

// refuseSpawns answers the spawn requests still queued when the actor
// stops, and refuses later ones.
func (a *Activation) refuseSpawns() {
	for _, m := range a.inbox.CloseControl() {
		if req, ok := m.(*spawnRequest); ok {
			req.reply <- spawned{err: parentStopping(a.id())}
		}
	}
}

func parentStopping(id string) error {
	return withCause(fault.ActivationClosing, "actors: agent \""+id+"\" cannot spawn a child", errParentStopping)
}

// openReleaseLane adds the release lane to the stopping actor's children
// (in its Stopping handler, so protoactor stops it with the others, last
// added first).
func (a *Activation) openReleaseLane(c actor.Context) {
	a.lane = &releaseLane{a: a, others: len(c.Children())}
	if _, err := c.SpawnNamed(laneProps, "release"); err != nil {
		a.kit.logger.Error("actors: agent stop: the release lane did not start; releasing in the actor", "agent", a.id(), "err", err)
		a.lane = nil
		a.releaseStep()
	}
}

// childStopped handles the Terminated of a child: it frees the child's
// name (see holdName) and, while stopping, counts it.
func (a *Activation) childStopped(c actor.Context) {
	t, ok := c.Message().(*actor.Terminated)
	if !ok || a.lane != nil && t.Who.Equal(a.lane.self) {
		return
	}
	a.kit.system.ProcessRegistry.Remove(t.Who)
	if a.lane != nil {
		a.lane.others--
		a.lane.maybeStart()
	}
}

// holdName keeps a stopped child actor's name registered, to a process
// that drops what it is sent, until its parent has handled its Terminated
// (childStopped). protoactor removes a stopping actor's name before it
// tells the parent, so a parent that stops in between sends its Stop to a
// name no longer registered: a dead letter, which nothing needs, and
// whose throttle starts a timer goroutine.
func (a *Activation) holdName(c actor.Context) {
	if a.parent != nil {
		a.kit.system.ProcessRegistry.Add(stoppedActor{}, c.Self().Id)
	}
}

// stoppedActor stands for a stopped child actor until its parent has
// handled its Terminated; it drops everything.
type stoppedActor struct{}

var _ actor.Process = stoppedActor{}

// SendUserMessage drops msg.
func (stoppedActor) SendUserMessage(*actor.PID, any) {}

// SendSystemMessage drops msg.
func (stoppedActor) SendSystemMessage(*actor.PID, any) {}

// Stop does nothing.
func (stoppedActor) Stop(*actor.PID) {}

// startRelease runs the release step once the cancelled turn has ended,
// then ends the lane (on the same goroutine, which runs the actor's
// remaining stop).
func (a *Activation) startRelease() {
	a.inbox.AfterIdle(a.releaseAndEnd)
}

// releaseAndEnd runs the release step, then ends the lane and runs the
// actor's remaining stop here.
func (a *Activation) releaseAndEnd() {
	a.releaseStep()
	a.inbox.RunHere(a.lane.end)
}

// releaseStep runs Config.Release, if any.
func (a *Activation) releaseStep() {
	if a.release != nil {
		a.release()
	}
}

// releaseLane is the process standing for a stop's release step among
// the stopping actor's children. It starts the release once protoactor
// has stopped the children (its own Stop marks that) and every other
// child has terminated, and ends (its Terminated) when end is called. Its
// fields are touched on the stopping actor's goroutine only.
type releaseLane struct {
	a       *Activation // the stopping agent
	self    *actor.PID
	others  int  // the other children not yet terminated
	stopped bool // protoactor has sent the lane its Stop
	started bool // the release step was started
}

// maybeStart starts the release once it may.
func (l *releaseLane) maybeStart() {
	if l.stopped && l.others == 0 && !l.started {
		l.started = true
		l.a.startRelease()
	}
}

var _ actor.Process = (*releaseLane)(nil)

// laneProps spawn the release lane of the stopping agent whose actor
// spawns them: one Props for every lane (spawnLane finds the lane).
var laneProps = actor.PropsFromProducer(nil, actor.WithSpawnFunc(spawnLane))

// spawnLane registers the lane of the stopping agent parent as its
// child (a protoactor SpawnFunc; parent is that agent's actor context).
func spawnLane(system *actor.ActorSystem, id string, _ *actor.Props, parent actor.SpawnerContext) (*actor.PID, error) {
	l := (*Activation)(parent.Actor().(*receiver)).lane
	pid, ok := system.ProcessRegistry.Add(l, id)
	if !ok {
		return pid, actor.ErrNameExists
	}
	l.self = pid
	return pid, nil
}

// end removes the lane and tells the stopping actor it terminated,
// posting straight to that actor's mailbox, the agent's inbox (what
// its process would do once looked up by PID).
func (l *releaseLane) end() {
	l.a.kit.system.ProcessRegistry.Remove(l.self)
	inbox.Mailbox(&l.a.inbox).PostSystemMessage(&actor.Terminated{Who: l.self})
}

// SendUserMessage drops msg: the lane receives nothing.
func (l *releaseLane) SendUserMessage(*actor.PID, any) {}

// SendSystemMessage takes note of the Stop its parent's stop sends it
// (on the parent actor's goroutine) and drops anything else: the lane
// ends when its release has returned.
func (l *releaseLane) SendSystemMessage(_ *actor.PID, msg any) {
	if _, ok := msg.(*actor.Stop); ok {
		l.stopped = true
		l.maybeStart()
	}
}

// Stop does nothing: see SendSystemMessage.
func (l *releaseLane) Stop(*actor.PID) {}
