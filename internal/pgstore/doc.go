// Package pgstore is the PostgreSQL session store: a session.Fenced store
// over one database, so that several processes (and machines) share one
// store of record safely.
//
// Sessions keep their header line verbatim, events their log line
// verbatim (the bytes the JSONL store writes), so a log exported to the
// JSONL layout is byte-identical to the one imported. Every append is
// one statement: the update of the session row checks that the batch
// continues the log (next_seq) and, when fenced, that its epoch and
// owner still hold the lease, and feeds the insert of the events, so a
// stale writer's batch writes no row at all. Leases use the database's
// clock (now()), so clocks of the processes need not agree; a store
// renews all of its leases in one statement every third of the TTL. A
// lease that renewal finds lost (another holder took it over after it
// expired) is forgotten and told to the live-session registry, which
// fences that session at once.
//
// The inbox and drains tables hold the durable inbox (a continuable
// child's follow-ups from its parent, a top-level session's prompts from
// users) and the drain cut-offs.
package pgstore
