package subagent

import "github.com/dsh-actors/dsh-actors/actors/manager"

// ErrInvalidMaxDepth is returned for a maxDepth that is not a non-negative
// safe integer. Every other error of this package is
// a *fault.Error: match it with errors.Is against its fault.Code
// (fault.Draining, fault.Unauthorized, fault.NotResumable, …).
var ErrInvalidMaxDepth = manager.ErrInvalidMaxDepth
