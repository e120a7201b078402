// Package stress is a randomized workload for continuable subagents with
// an invariant checker, shared by `dsh-actors stress` and the stress tests.
//
// Run builds Forests forests: each top-level agent is told "tree D K" and
// its turn spawns K continuable children told "tree D-1 K", down to depth
// D, so forests grow from inside turns while their leaves already settle;
// it waits until every node settled. Then Followups follow-ups race
// settlements, cold resumes and scoped drains: each goes to a random child,
// on behalf of its parent's latest handle (stale when that parent is
// gone), and about one step in ten first drains a random resident child's
// descendants. At the end every forest is drained, the runtime closed, and
// the invariants checked (see Report).
//
// The invariants: every follow-up is accepted or rejected with a typed
// error (DRAINING, UNAUTHORIZED, ACTIVATION_CLOSING, NOT_RESUMABLE), and
// accepted + rejected = sent; every accepted follow-up reached its child's
// log, or was discarded (agent/inbox/discard), or was reported lost to a
// failed log (an "accepted message lost" error line naming it): exactly
// one of them; every subagent/start ended, and every child's epoch ended
// before the epoch of its parent that was resident when the child started
// (child-first); after the final drain only the top-level agents are left,
// after close none; every session is stored and every child is listed by
// its parent's catalog without a diagnostic. Goroutines (measured by the
// caller around Run) must come back to baseline.
package stress
