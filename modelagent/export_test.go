package modelagent

import "github.com/dsh-actors/dsh-actors/internal/llm"

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
