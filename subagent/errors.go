package subagent

import "github.com/dsh-actors/dsh-actors/actors/manager"

// Error is the subagent layer's error: Code is the error code, Message the
// exact message, Cause the wrapped error. errors.Is matches any *Error
// with the same Code (compare against the Err* sentinels). It is the same
// type the continuation manager returns.
type Error = manager.Error

// DepthError is a child that would be too deep: "subagent depth <n> exceeds
// maxDepth <m>".
type DepthError = manager.DepthError

// Sentinels for errors.Is, one per error code.
var (
	ErrDuplicateProvider        = manager.ErrDuplicateProvider
	ErrNoProvider               = manager.ErrNoProvider
	ErrUnsupportedCapability    = manager.ErrUnsupportedCapability
	ErrContinuationUnavailable  = manager.ErrContinuationUnavailable
	ErrPersistenceUnavailable   = manager.ErrPersistenceUnavailable
	ErrDraining                 = manager.ErrDraining
	ErrUnauthorized             = manager.ErrUnauthorized
	ErrActivationClosing        = manager.ErrActivationClosing
	ErrNotResumable             = manager.ErrNotResumable
	ErrActivationTeardownFailed = manager.ErrActivationTeardownFailed
	ErrDurabilityFailed         = manager.ErrDurabilityFailed
	ErrSessionQueryUnavailable  = manager.ErrSessionQueryUnavailable
	ErrCancelled                = manager.ErrCancelled
)

// ErrInvalidMaxDepth is returned for a maxDepth that is not a non-negative
// safe integer.
var ErrInvalidMaxDepth = manager.ErrInvalidMaxDepth
