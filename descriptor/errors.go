package descriptor

import "github.com/dsh-actors/dsh-actors/fault"

// persistedPrefix starts every message about a persisted payload.
const persistedPrefix = "persisted subagent descriptor "

// corrupt is fault.DescriptorCorrupt: a persisted payload of the current
// version that breaks a rule (the listing reports it as "corrupt").
func corrupt(detail string) error {
	return fault.New(fault.DescriptorCorrupt, persistedPrefix+detail, nil)
}

// unsupported is fault.DescriptorUnsupported: a persisted payload whose
// numeric version is not Version (the listing reports it as "unsupported").
func unsupported(version string) error {
	return fault.New(fault.DescriptorUnsupported, persistedPrefix+"version "+version+" is not supported", nil)
}

// invalid is fault.DescriptorInvalid: a Snapshot input that cannot become
// a payload.
func invalid(message string) error {
	return fault.New(fault.DescriptorInvalid, message, nil)
}
