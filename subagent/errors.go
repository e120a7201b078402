package subagent

import (
	"fmt"

	"github.com/dsh-actors/dsh-actors/fault"
)

// duplicateProvider is DUPLICATE_PROVIDER for a name already registered.
func duplicateProvider(name string) *fault.Error {
	return fault.New(fault.DuplicateProvider, fmt.Sprintf("a subagent provider named \"%s\" is already registered", name), nil)
}

// unsupportedCapability is UNSUPPORTED_CAPABILITY for a one-shot request
// that needs a capability (outputSchema, depthLimit, toolFilter, persona)
// the provider does not declare.
func unsupportedCapability(provider, capability string) *fault.Error {
	return fault.New(fault.UnsupportedCapability,
		fmt.Sprintf("subagent provider \"%s\" does not support the \"%s\" capability", provider, capability), nil)
}

// unsupportedContinuable is UNSUPPORTED_CAPABILITY for a continuable start
// through a provider without the continuable capability.
func unsupportedContinuable(provider string) *fault.Error {
	return fault.New(fault.UnsupportedCapability, fmt.Sprintf(
		"subagent provider \"%s\" does not support continuable children (no prepareContinuable capability)", provider), nil)
}

// continuationUnavailable is CONTINUATION_UNAVAILABLE: no manager is bound.
func continuationUnavailable() *fault.Error {
	return fault.New(fault.ContinuationUnavailable, "continuable subagents require the agents service", nil)
}
