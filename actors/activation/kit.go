package activation

import (
	"log/slog"
	"reflect"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/extensions"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/actorkit"
)

// What every agent actor of one actor host has in common is built once
// and shared: the protoactor Props of the actors (at the root and under
// another agent), the supervision strategy, the logger and the model
// sources. An idle agent then holds none of it. The kits of an actor
// system live in that system's extensions, so they go away with it.

// kit is what the activations spawned on one host with one logger share.
type kit struct {
	system     *actor.ActorSystem
	dispatcher actor.Dispatcher
	supervisor actor.SupervisorStrategy
	logger     *slog.Logger

	// root and child are the Props of an agent actor spawned at the root
	// and under another agent's actor. Their producers take the
	// activation from spawning, which is set while spawnMu is held.
	root, child *actor.Props
	spawnMu     sync.Mutex
	spawning    *Activation

	sourcesMu sync.Mutex
	sources   map[[2]string]*event.ModelSource
}

// kits are the kits of one actor system, one per host and logger.
type kits struct{ list []*kit }

// kitsID is the extension id the kits of a system are registered under.
var kitsID = sync.OnceValue(extensions.NextExtensionID)

// ExtensionID makes kits a protoactor extension.
func (*kits) ExtensionID() extensions.ExtensionID { return kitsID() }

// kitsMu guards the kits extension of every actor system (protoactor's
// extensions are not safe for concurrent use).
var kitsMu sync.Mutex

// kitFor returns the kit of host and logger, making it on first use.
// A host whose dispatcher or supervisor cannot be compared gets a kit
// of its own each time.
func kitFor(host actorkit.Host, logger *slog.Logger) *kit {
	if !comparable(host.Dispatcher) || !comparable(host.Supervisor) {
		return newKit(host, logger)
	}
	kitsMu.Lock()
	defer kitsMu.Unlock()
	all, _ := host.System.Extensions.Get(kitsID()).(*kits)
	if all == nil {
		all = &kits{}
		host.System.Extensions.Register(all)
	}
	for _, have := range all.list {
		if have.dispatcher == host.Dispatcher && have.supervisor == host.Supervisor && have.logger == logger {
			return have
		}
	}
	k := newKit(host, logger)
	all.list = append(all.list, k)
	return k
}

// comparable reports whether v may be compared with ==.
func comparable(v any) bool { return v == nil || reflect.TypeOf(v).Comparable() }

// newKit builds the kit of host and logger.
func newKit(host actorkit.Host, logger *slog.Logger) *kit {
	k := &kit{system: host.System, dispatcher: host.Dispatcher, supervisor: host.Supervisor, logger: logger}
	supervisor := host.Supervisor
	if supervisor == nil {
		supervisor = actorkit.StopStrategy(logger)
	}
	opts := []actor.PropsOption{
		actor.WithMailbox(k.mailbox),
		actor.WithSupervisor(supervisor),
	}
	if host.Dispatcher != nil {
		opts = append(opts, actor.WithDispatcher(host.Dispatcher))
	}
	// protoactor refuses a guardian on a child's props: a child is
	// supervised by its parent's strategy.
	k.child = actor.PropsFromProducer(k.receiver, opts...)
	k.root = actor.PropsFromProducer(k.receiver, append(opts, actor.WithGuardian(supervisor))...)
	return k
}

// spawn spawns a's actor by spawnFn, which must spawn synchronously
// (protoactor's own spawners do): the producers called meanwhile build
// a's actor and mailbox. The actor's Started is processed right here,
// on the calling goroutine, rather than by a dispatcher worker woken for
// it: the spawner is running anyway, and a fresh agent then wakes a
// worker only for its first message.
func (k *kit) spawn(a *Activation, spawnFn func() (*actor.PID, error)) (pid *actor.PID, err error) {
	a.inbox.RunHere(func() {
		k.spawnMu.Lock()
		defer k.spawnMu.Unlock()
		k.spawning = a
		pid, err = spawnFn()
		k.spawning = nil
	})
	return pid, err
}

// receiver is the Props' producer: the activation being spawned.
func (k *kit) receiver() actor.Actor { return (*receiver)(k.spawning) }

// mailbox is the Props' mailbox producer: the inbox of the activation
// being spawned.
func (k *kit) mailbox() actor.Mailbox { return inbox.Mailbox(&k.spawning.inbox) }

// source is the model source of provider and model ("" for the
// defaults), shared by every activation that names them.
func (k *kit) source(provider, model string) *event.ModelSource {
	key := [2]string{provider, model}
	k.sourcesMu.Lock()
	defer k.sourcesMu.Unlock()
	if s := k.sources[key]; s != nil {
		return s
	}
	if k.sources == nil {
		k.sources = map[[2]string]*event.ModelSource{}
	}
	s := newModelSource(provider, model)
	k.sources[key] = &s
	return &s
}
