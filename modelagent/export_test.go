package modelagent

import (
	"context"
	"errors"
	"time"

	"github.com/dsh-actors/dsh-actors/event"

	"github.com/dsh-actors/dsh-actors/internal/llm"
)

// NewOver is the tests' seam: the model agents of cfg over client instead
// of a client of cfg's endpoint, sampling the retry jitter with random.
func NewOver(cfg Config, client llm.Client, random func() float64) *Agents {
	a, err := newAgents(cfg, client, random)
	if err != nil {
		panic(err)
	}
	return a
}

// NewOverChecked is NewOver returning New's error for cfg.Tools.
func NewOverChecked(cfg Config, client llm.Client, random func() float64) (*Agents, error) {
	return newAgents(cfg, client, random)
}

// DefaultSystem is the system prompt of a Config without one.
const DefaultSystem = defaultSystem

// TaskSettled is closed once the background task id settled (nil for an
// unknown id).
func (a *Agents) TaskSettled(id string) <-chan struct{} {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	if t := a.tasks.byID[id]; t != nil {
		return t.settled
	}
	return nil
}

// MCPTools are the names of the MCP servers' tools as last listed.
func (a *Agents) MCPTools() []string {
	var names []string
	for _, t := range a.mcp.tools(context.Background()) {
		names = append(names, t.Name)
	}
	return names
}

// MCPConnects counts the sessions made with server so far.
func (a *Agents) MCPConnects(server string) int {
	for _, s := range a.mcp.servers {
		if s.name == server {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.connects
		}
	}
	return 0
}

// MCPDown reports whether server is down (its session gone, reconnecting).
func (a *Agents) MCPDown(server string) bool {
	for _, s := range a.mcp.servers {
		if s.name == server {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.session == nil
		}
	}
	return false
}

// MCPToolName is the model-facing name of an MCP server's tool.
func MCPToolName(server, tool string) string { return mcpToolName(server, tool) }

// CallMCP runs the MCP tool name with the raw arguments as a model's call
// would (after the servers' first connection attempt).
func (a *Agents) CallMCP(ctx context.Context, name, arguments string) (string, error) {
	reg, err := newRegistry(a.mcp.tools(ctx)...)
	if err != nil {
		return "", err
	}
	result := reg.execute(ctx, event.ToolCallBlock{ID: "bench", Name: name, Arguments: arguments})
	text := event.TextOf(result.Content)
	if result.IsError {
		return "", errors.New(text)
	}
	return text, nil
}

// SetMCPCallTimeout bounds each MCP tool call by d until the test ends.
func SetMCPCallTimeout(t interface{ Cleanup(func()) }, d time.Duration) {
	previous := mcpCallTimeout
	mcpCallTimeout = d
	t.Cleanup(func() { mcpCallTimeout = previous })
}
