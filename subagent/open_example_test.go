package subagent_test

import (
	"context"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// openService opens an actor runtime over a JSONL store at root (memory
// sessions when root is "") with its subagent service, the spawn and
// fork providers registered; close closes the runtime, every agent
// disposed child-first.
func openService(root string) (rt *actors.Runtime, svc *subagent.Service, close func() error, err error) {
	rt, err = actors.New(actors.Options{Root: root})
	if err != nil {
		return nil, nil, nil, err
	}
	close = func() error { return rt.Close(context.Background()) }
	svc, err = subagent.New(rt, query.New(rt.Sessions()))
	for _, p := range []subagent.Provider{subagent.NewSpawn(rt), subagent.NewFork(rt)} {
		if err == nil {
			_, err = svc.RegisterProvider(p)
		}
	}
	if err != nil {
		_ = close()
		return nil, nil, nil, err
	}
	return rt, svc, close, nil
}
