package descriptor

import (
	"slices"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/event"
)

// version is the only descriptor version this build reads and writes.
const version = 1

// Data is a valid version-1 payload. Marshalled with encoding/json it
// writes the keys in the original's order (version, provider, label,
// agentProvider, agentModel, persona, toolFilter) and omits absent optionals.
type Data struct {
	Version       int               `json:"version"`
	Provider      string            `json:"provider"`
	Label         string            `json:"label"`
	AgentProvider string            `json:"agentProvider,omitempty"`
	AgentModel    string            `json:"agentModel,omitempty"`
	Persona       string            `json:"persona,omitempty"`
	ToolFilter    *event.ToolFilter `json:"toolFilter,omitempty"`
}

// Snapshot validates what a continuable start records (in's Version is
// ignored) and returns a detached version-1 payload that shares no memory
// with it. Provider and Label are required; the other fields are optional.
// A missing provider or label, a tool filter that declares neither list,
// or a string that is not valid UTF-8 (which JSON cannot carry losslessly)
// is an error matching fault.DescriptorInvalid.
func Snapshot(in Data) (Data, error) {
	if in.Provider == "" {
		return Data{}, invalid("subagent descriptor provider is required")
	}
	if in.Label == "" {
		return Data{}, invalid("subagent descriptor label is required")
	}
	if in.ToolFilter != nil && in.ToolFilter.Allow == nil && in.ToolFilter.Deny == nil {
		return Data{}, invalid("subagent descriptor toolFilter must declare allow and/or deny")
	}
	if !losslessJSON(in) {
		return Data{}, invalid("subagent descriptor is not losslessly JSON-serializable")
	}
	return Data{
		Version:       version,
		Provider:      in.Provider,
		Label:         in.Label,
		AgentProvider: in.AgentProvider,
		AgentModel:    in.AgentModel,
		Persona:       in.Persona,
		ToolFilter:    cloneToolFilter(in.ToolFilter),
	}, nil
}

// losslessJSON reports whether every string of in survives a JSON round
// trip (encoding/json replaces invalid UTF-8 with U+FFFD).
func losslessJSON(in Data) bool {
	strs := []string{in.Provider, in.Label, in.AgentProvider, in.AgentModel, in.Persona}
	if in.ToolFilter != nil {
		strs = append(strs, in.ToolFilter.Allow...)
		strs = append(strs, in.ToolFilter.Deny...)
	}
	for _, s := range strs {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func cloneToolFilter(tf *event.ToolFilter) *event.ToolFilter {
	if tf == nil {
		return nil
	}
	return &event.ToolFilter{Allow: slices.Clone(tf.Allow), Deny: slices.Clone(tf.Deny)}
}
