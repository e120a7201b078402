// Package descriptor is the versioned subagent/descriptor event: the
// log-only record a continuable child carries in its own session suffix
// that proves it is a continuable subagent and holds what a provider-free
// cold resume needs to rebuild it.
//
// There is one version, 1, with one shape:
//
//	{version:1, provider, label, agentProvider?, agentModel?, persona?,
//	 toolFilter?:{allow?, deny?}}
//
// Snapshot builds a payload from Go values (validating and detaching them);
// Parse checks a persisted payload rule by rule in a fixed order and
// reports a malformed current-version payload as fault.DescriptorCorrupt and any other
// version as fault.DescriptorUnsupported. The manager parses the first
// descriptor of a session's own suffix (at or after its seedLength), so an
// ancestor's descriptor replayed by a fork seed is ignored.
//
// Go has no "undefined": an optional string field that is empty is treated
// as absent and omitted when the payload is written.
package descriptor
