package manager

import (
	"errors"
	"fmt"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/fault"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, the bound
// for depths.
const maxSafeInteger = 1<<53 - 1

// errInvalidMaxDepth is returned for a maxDepth that is not a
// non-negative safe integer. It is a fault.InvalidRequest.
var errInvalidMaxDepth = fault.New(fault.InvalidRequest, "subagent maxDepth must be a non-negative safe integer", nil)

// errInvalidSubagentDepth is returned for an agent whose runtime
// subagent depth is not a non-negative safe integer.
var errInvalidSubagentDepth = errors.New("agent subagentDepth must be a non-negative safe integer")

// errDepthOutOfRange is returned for a child depth beyond the
// safe-integer range.
var errDepthOutOfRange = errors.New("subagent child depth exceeds the safe-integer range")

// depthExceeded is fault.DepthExceeded: a child would be deeper than the caller's absolute maxDepth cap.
func depthExceeded(attempted, maxDepth int) error {
	return fault.New(fault.DepthExceeded, fmt.Sprintf("subagent depth %d exceeds maxDepth %d", attempted, maxDepth), nil)
}

// AssertMaxDepth accepts nil (no cap) or a non-negative safe integer and
// returns errInvalidMaxDepth otherwise. It never blocks.
func AssertMaxDepth(maxDepth *int) error {
	if maxDepth != nil && !safeNonNegative(*maxDepth) {
		return errInvalidMaxDepth
	}
	return nil
}

// ChildDepth is the delegation depth of a new child of the live agent p
// under an optional absolute cap maxDepth: p's own depth (delegationDepth)
// plus one, fault.DepthExceeded when that exceeds maxDepth. It never
// blocks.
func ChildDepth(p *parent.Handle, maxDepth *int) (int, error) {
	parentDepth, err := delegationDepth(p.Header().DelegationDepth, p.Spec().SubagentDepth)
	if err != nil {
		return 0, err
	}
	return childDepth(parentDepth, maxDepth)
}

// delegationDepth is an agent's delegation depth: the larger of its durable
// header's delegationDepth (the monotone floor) and its runtime
// subagentDepth, so a resumed child never counts as top-level again.
func delegationDepth(headerDepth, runtimeDepth int) (int, error) {
	if !safeNonNegative(runtimeDepth) {
		return 0, errInvalidSubagentDepth
	}
	return max(headerDepth, runtimeDepth), nil
}

// childDepth is the depth of a child of a parent at parentDepth under an
// optional absolute cap: parentDepth+1, fault.DepthExceeded when that exceeds
// maxDepth, or errDepthOutOfRange past the safe-integer range.
func childDepth(parentDepth int, maxDepth *int) (int, error) {
	if parentDepth >= maxSafeInteger {
		return 0, errDepthOutOfRange
	}
	child := parentDepth + 1
	if maxDepth != nil && child > *maxDepth {
		return 0, depthExceeded(child, *maxDepth)
	}
	return child, nil
}

func safeNonNegative(n int) bool { return n >= 0 && n <= maxSafeInteger }
