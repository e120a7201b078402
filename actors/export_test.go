package actors

import "github.com/asynkron/protoactor-go/actor"

// WithDispatcher returns opts running the agents' mailboxes on d instead of
// the runtime's pool (the benchmarks compare protoactor's default).
func WithDispatcher(opts Options, d actor.Dispatcher) Options {
	opts.dispatcher = d
	return opts
}
