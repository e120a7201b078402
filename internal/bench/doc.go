// Package bench holds the measurement loops behind `dsh-actors bench`: each
// compares our runtime, opened with dsh.Open and driven through the root
// package and the web host as an embedder drives it, with a baseline
// measured in the same run (a raw Go channel, bare protoactor, a raw
// group-committing file appender, the raw read of a store's files) and
// reports the ratio, never an absolute time
// judged against a threshold, because the machines it runs on are shared
// and noisy.
//
// The rows (see RowNames) follow the benchmark sections of the issues:
//
//  1. Prompt admission round trip to an idle agent (PromptSession, until
//     the caller holds the MessageID) vs a raw channel request/reply and a bare
//     protoactor RequestFuture, interleaved (Admission).
//  2. Scripted `reply` turns with every event durable, one agent and many
//     in parallel, vs the raw group-commit append rate of the same lines
//     (Turns, RawAppend).
//  3. Bytes per idle live agent vs per idle bare actor (Idle); agent
//     start+dispose vs protoactor spawn+stop needs the runtime's internals
//     and is actors' BenchmarkSpawnDispose.
//  4. Live appends with group commit vs one fdatasync per event vs no
//     fsync: the session store's own path, which no public call takes one
//     event at a time, so it is session's BenchmarkLiveAppendDurability
//     and Run only names it.
//  5. Spawn until the child settled vs protoactor spawn+stop
//     (Settle); a follow-up to a resident child vs cold resumes of logs of
//     growing size, with the cost per stored event (Resident, ColdResume).
//  6. The child-first scoped drain of a continuable forest vs protoactor
//     StopFuture on a tree of the same shape (Drain, StopTree); beside it,
//     the floor of that drain: the same shape doing only the steps any
//     runtime of this design must take per agent, with none of its state
//     (DrainFloor), so the share of the ratio the runtime's own bookkeeping
//     takes can be read off. The three run interleaved, round by round.
//  7. Runtime.Children over a generated store vs the raw read of the same
//     files (GenerateStore, ListChildren, RawCatalogRead; the store comes
//     from internal/storegen); the seed's O(D×C) relist-per-read catalog
//     wraps the store's internals and is query's
//     BenchmarkListChildrenSeedCost.
//  8. Runtime.Children through the derived index vs without it, and the
//     p99 of subagent.list served by the web host under concurrent
//     clients for a parent of D children vs one of one child.
//  9. Per-agent costs (spawn, send, settle, drain, close) at growing
//     numbers of live children of one parent.
//
// Run measures the rows selected in a Config (Full and Quick are the two
// standard sizes) and returns a Report, which WriteTable prints as an
// aligned table with footnotes (its JSON tags give the JSON form the CLI
// prints, bench --json). Each Line carries
// ours, its baseline, the ratio (Compare), the target when the issues set
// one, and whether it was met; a missed target is information, not an
// error. Every function blocks until its measurement is done (or ctx is
// done between operations) and leaves no goroutine, runtime or temporary
// store behind.
package bench
