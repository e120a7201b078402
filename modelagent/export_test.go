package modelagent

import "github.com/dsh-actors/dsh-actors/internal/llm"

// NewOver is the tests' seam: the model agents of cfg over client instead
// of a client of cfg's endpoint, sampling the retry jitter with random.
func NewOver(cfg Config, client llm.Client, random func() float64) *Agents {
	return newAgents(cfg, client, random)
}

// DefaultSystem is the system prompt of a Config without one.
const DefaultSystem = defaultSystem
