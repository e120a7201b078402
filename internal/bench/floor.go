package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/cpuclock"
	"github.com/dsh-actors/dsh-actors/internal/dispatch"

	"github.com/asynkron/protoactor-go/actor"
)

// floorLine is the size of a cancelled turn's turn/end line in a log.
var floorLine = []byte(`{"seq":3,"time":1764522000000,"type":"turn/end","data":{"turn":1,"reason":{"kind":"aborted"}}}` + "\n")

// floorNode is one agent of the floor forest: a bare actor, a goroutine
// standing for its running turn, and a folder of its own holding its log
// file and its lease record. The log is kept open as the runtime keeps
// its logs' files while the process has descriptors to spare
// (floorKeptFiles), reopened for the append otherwise. The lease record
// is a hard link to one of floorOwners owner files, as a JSONL store
// records the lease of a live session; it is removed once the node's
// children are gone.
type floorNode struct {
	pid     *actor.PID
	cancel  context.CancelFunc
	path    string
	lease   string
	file    *os.File // nil when not kept open
	owner   *floorNode
	pending atomic.Int32  // children not yet terminated
	settled chan struct{} // closed once pending reaches 0
}

func (n *floorNode) childGone() {
	if n.pending.Add(-1) == 0 {
		close(n.settled)
	}
}

// floorOwners is how many owner files the floor's lease records link
// to, as many as a JSONL store spreads its records over.
const floorOwners = 16

// floorWatch asks the floor manager to watch pids and to answer once it does.
type floorWatch struct{ pids []*actor.PID }

// floorCancel asks the floor manager to cancel every node, in order.
type floorCancel struct{}

// floorManager watches every node's actor and counts their Terminated
// messages, telling each owner when its last child is gone.
type floorManager struct {
	nodes []*floorNode
	byPID map[*actor.PID]*floorNode
	done  chan struct{}
}

func (m *floorManager) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case floorWatch:
		for _, pid := range msg.pids {
			c.Watch(pid)
		}
		c.Respond(true)
	case floorCancel:
		for _, n := range m.nodes {
			n.cancel()
		}
	case *actor.Terminated:
		n := m.byPID[msg.Who]
		if n == nil {
			return
		}
		delete(m.byPID, msg.Who)
		if n.owner != nil {
			n.owner.childGone()
		}
		if len(m.byPID) == 0 {
			close(m.done)
		}
	}
}

// DrainFloor measures, on n forests of the drained shape (fanout children
// per node, depth levels), the steps a child-first drain needs whatever a
// runtime keeps besides: from one manager actor, cancel every agent's
// running turn in one span; each woken turn appends one line to its own
// log file, waits until its children are gone, removes its lease record
// (one unlink: a lease held across processes is given up) and stops its
// actor; the
// manager, watching every actor, counts the Terminated messages. The
// nodes hold no session, inbox, registry or lifecycle state. The actors
// run on the runtime's dispatcher (dispatch.Pool): the nodes on a pool
// of GOMAXPROCS workers, the manager on a pool of one. Building a forest and
// collecting its garbage is untimed; ctx bounds the wait for a drain.
func DrainFloor(ctx context.Context, dir string, fanout, depth, n int) (res Samples, agents int, err error) {
	return drainFloor(ctx, dir, fanout, depth, n, new(time.Duration))
}

// drainFloor is DrainFloor, adding the process CPU time its drains took
// (each from its cancel to its last Terminated) to cpu.
func drainFloor(ctx context.Context, dir string, fanout, depth, n int, cpu *time.Duration) (res Samples, agents int, err error) {
	system := QuietSystem()
	defer system.Shutdown()
	nodes, manager := dispatch.NewPool(runtime.GOMAXPROCS(0), mailboxThroughput), dispatch.NewPool(1, mailboxThroughput)
	defer nodes.Close()
	defer manager.Close()
	f := floor{system: system, nodes: nodes, manager: manager, cpu: cpu}
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		took, count, err := f.drainOnce(ctx, filepath.Join(dir, fmt.Sprint(i)), fanout, depth)
		if err != nil {
			return nil, 0, err
		}
		res, agents = append(res, took), count
	}
	return res, agents, nil
}

// floor is where DrainFloor's forests run.
type floor struct {
	system  *actor.ActorSystem
	nodes   actor.Dispatcher
	manager actor.Dispatcher
	cpu     *time.Duration // the drains' process CPU time, summed
}

func (f floor) drainOnce(ctx context.Context, dir string, fanout, depth int) (took time.Duration, agents int, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, fmt.Errorf("drain floor: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	m := &floorManager{byPID: map[*actor.PID]*floorNode{}, done: make(chan struct{})}
	var turns sync.WaitGroup
	var writeErr atomic.Pointer[error]
	quit := make(chan struct{}) // ends the turns of a forest that failed
	defer func() {
		close(quit)
		for _, n := range m.nodes {
			n.cancel()
		}
		turns.Wait()
		for _, n := range m.nodes {
			if n.file != nil {
				err = errors.Join(err, n.file.Close())
			}
		}
		if p := writeErr.Load(); p != nil {
			err = errors.Join(err, *p)
		}
	}()
	if err := f.grow(m, dir, fanout, depth, floorTurns{&turns, &writeErr, quit}); err != nil {
		return 0, len(m.nodes), err
	}
	system := f.system
	managerPID := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return m }, actor.WithDispatcher(f.manager)))
	defer system.Root.Stop(managerPID)
	pids := make([]*actor.PID, len(m.nodes))
	for i, n := range m.nodes {
		pids[i] = n.pid
	}
	if _, err := system.Root.RequestFuture(managerPID, floorWatch{pids}, time.Minute).Result(); err != nil {
		return 0, len(m.nodes), err
	}
	runtime.GC()
	start, cpu0 := time.Now(), cpuclock.Process()
	system.Root.Send(managerPID, floorCancel{})
	select {
	case <-m.done:
		took := time.Since(start)
		*f.cpu += cpuclock.Process() - cpu0
		return took, len(m.nodes), nil
	case <-ctx.Done():
		return 0, len(m.nodes), ctx.Err()
	}
}

// grow creates the forest's nodes level by level, each with its log file
// (holding one line already), its actor and its waiting turn.
func (f floor) grow(m *floorManager, dir string, fanout, depth int, turns floorTurns) error {
	system := f.system
	props := EchoProps(actor.WithDispatcher(f.nodes))
	owners, err := floorOwnerFiles(dir)
	if err != nil {
		return err
	}
	level := []*floorNode{nil}
	for range depth {
		var next []*floorNode
		for _, owner := range level {
			for range fanout {
				n, err := newFloorNode(system, props, dir, len(m.nodes), owner)
				if err == nil {
					err = os.Link(owners[len(m.nodes)%floorOwners], n.lease)
				}
				if err != nil {
					return err
				}
				m.nodes = append(m.nodes, n)
				m.byPID[n.pid] = n
				next = append(next, n)
			}
		}
		level = next
	}
	for _, n := range m.nodes {
		if n.pending.Load() == 0 {
			close(n.settled)
		}
		ctx, cancel := context.WithCancel(context.Background())
		n.cancel = cancel
		turns.wg.Go(func() { n.runTurn(ctx, system, turns) })
	}
	return nil
}

// floorOwnerFiles creates the owner files the lease records link to.
func floorOwnerFiles(dir string) ([]string, error) {
	owners := make([]string, floorOwners)
	for i := range owners {
		owners[i] = filepath.Join(dir, fmt.Sprintf("owner-%d", i))
		if err := os.WriteFile(owners[i], nil, 0o600); err != nil {
			return nil, fmt.Errorf("drain floor: %w", err)
		}
	}
	return owners, nil
}

func newFloorNode(system *actor.ActorSystem, props *actor.Props, dir string, i int, owner *floorNode) (*floorNode, error) {
	folder := filepath.Join(dir, fmt.Sprint(i))
	if err := os.Mkdir(folder, 0o700); err != nil {
		return nil, fmt.Errorf("drain floor: folder of agent %d: %w", i, err)
	}
	n := &floorNode{path: filepath.Join(folder, "session.jsonl"), lease: filepath.Join(folder, "session.lease"),
		owner: owner, settled: make(chan struct{}), cancel: func() {}}
	f, err := os.OpenFile(n.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("drain floor: log of agent %d: %w", i, err)
	}
	if _, err := f.Write(floorLine); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	if i < floorKeptFiles() {
		n.file = f
	} else if err := f.Close(); err != nil {
		return nil, err
	}
	if owner != nil {
		owner.pending.Add(1)
	}
	n.pid = system.Root.Spawn(props)
	return n, nil
}

// appendLine appends the turn's end to the node's log, through its kept
// file or a file opened for it.
func (n *floorNode) appendLine() error {
	if n.file != nil {
		_, err := n.file.Write(floorLine)
		return err
	}
	f, err := os.OpenFile(n.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(floorLine)
	return errors.Join(err, f.Close())
}

// floorTurns is what the turns of one floor forest share.
type floorTurns struct {
	wg       *sync.WaitGroup
	writeErr *atomic.Pointer[error] // the first failed write
	quit     <-chan struct{}        // closed once the forest is done with
}

// runTurn waits for the cancel, logs the turn's end, waits for the
// children, gives the lease up and stops the node's actor.
func (n *floorNode) runTurn(ctx context.Context, system *actor.ActorSystem, turns floorTurns) {
	<-ctx.Done()
	if err := n.appendLine(); err != nil {
		turns.writeErr.CompareAndSwap(nil, &err)
	}
	select {
	case <-n.settled:
		if err := syscall.Unlink(n.lease); err != nil {
			turns.writeErr.CompareAndSwap(nil, &err)
		}
		system.Root.Stop(n.pid)
	case <-turns.quit:
	}
}

// mailboxThroughput is how many messages a mailbox run of the floor's
// actors handles before it yields, as the runtime's inboxes do.
const mailboxThroughput = 300
