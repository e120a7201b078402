package activation

import (
	"cmp"
	"errors"
	"slices"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
)

// An agent spawned under another is a protoactor child of the other's
// actor, and its family (below) counts it. A stop runs child-first on
// the agents' own goroutines rather than through protoactor's stop
// messages: Stop closes the agent's inbox and stops its children, top-down
// in one call; each agent then waits for two things, its cancelled turn's
// end and its children's Terminated, and the goroutine that sees the last
// of them (the turn's own when the turn ends last, else the parent
// actor's, which hands it on) runs the release step and stops the actor,
// which then has no child left and tells its parent at once. A stop that
// protoactor begins instead (the supervisor stopping a failed actor)
// cannot be held by a family: its release runs in a release lane, one
// more child of the stopping actor, a process of ours that ends (and
// sends its Terminated) when the release step has returned, on a
// goroutine of its own. protoactor then finishes the stop as for any
// child.

// family is an agent's children and, once its stop began, what that stop
// still waits for. Children are kept by actor id, so a child's Terminated
// costs the same however many siblings it has.
type family struct {
	mu       sync.Mutex
	children map[string]child // by actor id: spawned under the agent, not yet terminated
	spawned  uint64           // children ever spawned: the next one's order
	closed   bool             // the stop began: no more spawns
	// waiting counts, once closed, the children not yet terminated plus
	// one until the agent is idle.
	waiting int
}

// child is an agent spawned under another, its actor, and its place in
// the order its siblings were spawned in.
type child struct {
	a     *Activation
	pid   *actor.PID
	order uint64
}

// familyOf is a's family, made on first use.
func (a *Activation) familyOf() *family {
	if f := a.family.Load(); f != nil {
		return f
	}
	a.family.CompareAndSwap(nil, new(family))
	return a.family.Load()
}

// leafStopped is the family of every agent whose stop began before
// anything was spawned under it (most agents of a forest): closed, with
// no children, its stop awaiting the agent's idleness alone. It is shared
// and never changes, so such a stop allocates no family.
var leafStopped = &family{closed: true}

// closeFamily closes a's family (see family.close) and returns the
// children its stop waits for; a leaf gets leafStopped.
func (a *Activation) closeFamily() []child {
	if a.family.CompareAndSwap(nil, leafStopped) {
		return nil
	}
	return a.family.Load().close()
}

// add counts the child a, whose actor is pid (f.mu held).
func (f *family) add(a *Activation, pid *actor.PID) {
	if f.children == nil {
		f.children = make(map[string]child)
	}
	f.children[pid.Id] = child{a: a, pid: pid, order: f.spawned}
	f.spawned++
}

// close refuses later spawns and returns the children the stop waits for,
// in the order they were spawned: nil, allocating nothing, for a leaf
// (most agents of a forest), else one slice.
func (f *family) close() []child {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.waiting = len(f.children) + 1
	if len(f.children) == 0 {
		return nil
	}
	children := make([]child, 0, len(f.children))
	for _, c := range f.children {
		children = append(children, c)
	}
	slices.SortFunc(children, func(x, y child) int { return cmp.Compare(x.order, y.order) })
	return children
}

// gone removes the child whose actor is pid and reports whether the stop
// waited for nothing else.
func (f *family) gone(pid *actor.PID) (last bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.children[pid.Id]; !ok {
		return false
	}
	delete(f.children, pid.Id)
	return f.closed && f.less()
}

// less counts one wait of the stop as over and reports whether it was the
// last (f.mu held).
func (f *family) less() bool {
	f.waiting--
	return f.waiting == 0
}

// idle counts the agent's idleness as reached and reports whether the
// stop waited for nothing else.
func (f *family) idle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.less()
}

// beginStop begins a's stop with cause unless one began: OnStop's fn,
// the inbox closed, the children stopped. With idleHere the caller has
// seen a idle (Dispose) and finishes the stop itself when nothing else is
// awaited; else a's idleness is awaited (AfterIdle), registered before
// the turn is cancelled, so a turn that ends last finishes the stop on
// its own goroutine.
func (a *Activation) beginStop(cause agent.CancelCause, idleHere bool) {
	if !a.stopBegun.CompareAndSwap(false, true) {
		return
	}
	children := a.stopBegins(cause)
	if !idleHere {
		a.inbox.AfterIdle(a.idled)
	}
	for _, c := range children {
		c.a.Stop(cause)
	}
	if idleHere {
		a.idled()
	}
}

// stopBegins is the start of every stop: OnStop's fn, then the family
// closed and the inbox closed with cause; it returns the children to
// stop.
func (a *Activation) stopBegins(cause agent.CancelCause) []child {
	if fn := a.onStop.Load(); fn != nil {
		(*fn)()
	}
	children := a.closeFamily()
	a.inbox.Close(cause)
	return children
}

// idled notes that a's stop found it idle; the last of its waits
// finishes it (a leaf's only wait is this one).
func (a *Activation) idled() {
	if f := a.familyOf(); f == leafStopped || f.idle() {
		a.finishStop()
	}
}

// finishStop runs the release step and then, unless a stop protoactor
// began took the step first, stops a's actor here: with no child left,
// it stops at once and tells its parent. It must not run on the actor.
func (a *Activation) finishStop() {
	if a.releaseStep() {
		a.inbox.RunHere(func() { inbox.Mailbox(&a.inbox).PostSystemMessage(&actor.Stop{}) })
	}
}

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
	f := a.familyOf()
	f.mu.Lock()
	defer f.mu.Unlock()
	if a.stopping || f.closed {
		req.reply <- spawned{err: parentStopping(a.id())}
		return
	}
	k := req.child.kit
	pid, err := k.spawn(req.child, func() (*actor.PID, error) { return c.SpawnNamed(k.child, req.name) })
	if err == nil {
		f.add(req.child, pid)
	}
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
// name (see holdName) and counts it, for a's stop (its family's, whose
// last wait it may end, on a goroutine of its own: the actor must not
// wait for the release) and for its release lane, if any.
func (a *Activation) childStopped(c actor.Context) {
	t, ok := c.Message().(*actor.Terminated)
	if !ok || a.lane != nil && t.Who.Equal(a.lane.self) {
		return
	}
	a.kit.system.ProcessRegistry.Remove(t.Who)
	if f := a.family.Load(); f != nil && f.gone(t.Who) {
		go a.finishStop()
	}
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

// releaseStep runs Config.Release, if any, unless the step was taken
// already (a stop protoactor began may race a's own), and reports whether
// it took it.
func (a *Activation) releaseStep() bool {
	if !a.released.CompareAndSwap(false, true) {
		return false
	}
	if a.release != nil {
		a.release()
	}
	return true
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
