package dsh

import (
	"cmp"

	"github.com/dsh-actors/dsh-actors/agent"
)

// scripted is the provider and model name of agent.Scripted's route, and
// of an agent whose options name none.
const scripted = "scripted"

// route names the agents one factory builds, as a continuable child's
// descriptor records them (agentProvider, agentModel). A route with an
// empty model stands for every model of its provider.
type route struct{ provider, model string }

// routeOf is the route agent options name, "scripted" for an empty part.
func routeOf(opts agent.Options) route {
	return route{cmp.Or(opts.Provider, scripted), cmp.Or(opts.Model, scripted)}
}

// agentRoutes is the runtime's one agent factory: it builds each agent
// with the factory of the route its options name (for a cold-resumed child,
// its descriptor's), never with another: the scripted agent builds the
// "scripted" route, Options.NewAgent (agent.Scripted when nil) the route
// of Provider and Model, and model agents every model of their provider.
// For a route none of them builds it returns nil, which the runtime
// refuses with fault.NotResumable naming the route.
func agentRoutes(opts Options) agent.Factory {
	byRoute := map[route]agent.Factory{{scripted, scripted}: agent.Scripted}
	if opts.ModelAgents != nil {
		provider, _ := opts.ModelAgents.Route()
		byRoute[route{provider: provider}] = opts.ModelAgents.Factory
	}
	newAgent := opts.NewAgent
	if newAgent == nil {
		newAgent = agent.Scripted
	}
	byRoute[routeOf(agent.Options{Provider: opts.Provider, Model: opts.Model})] = newAgent
	return func(o agent.Options) agent.Agent {
		r := routeOf(o)
		if build, ok := byRoute[r]; ok {
			return build(o)
		}
		if build, ok := byRoute[route{provider: r.provider}]; ok {
			return build(o)
		}
		return nil
	}
}
