// Package storegen writes synthetic JSONL session stores for measurements
// and tests, as another program would: from the store format of
// docs/store-format.md alone (the layout, the header line, the event
// lines), importing no package of this module. What it writes, dsh.Open
// opens, lists and reads.
//
// Generate writes a store of a given Shape: a parent session (Parent)
// with D continuable children among C sessions in all, each log holding a
// number of ordinary ten-event turns. It is the one generator behind
// `dsh-actors bench` (internal/bench: the catalog, index and cold-resume rows) and the listing
// benchmarks of query, the derived index and the Postgres store.
// ContinuableChild is one settled continuable child's log of about n
// events, for the cold-resume measurements. Write writes given logs.
//
// Everything here blocks until every file is written, and writes no
// temporary file and calls no fsync: a generated store is a fixture, not
// crash-safe.
package storegen
