// Package storegen writes synthetic session stores for measurements: a
// parent session (Parent) with D continuable children among C sessions in
// all, each log holding a number of ordinary ten-event turns, laid out
// exactly as session.OpenJSONL reads them. It is the one generator behind
// `dsh-actors bench` (row 7, internal/bench) and the query package's
// listing benchmarks and reference store.
//
// RelistingStore wraps a session.Store so that every read lists the whole
// store first (a naive catalog's cost), the baseline those
// measurements compare against.
//
// WriteSynthetic writes given logs in the exact bytes the JSONL store
// writes, without a temporary file or fsync, for tests and benchmarks
// that need large stores quickly.
//
// The package depends on session and descriptor only. Generate blocks
// until every log is written (no fsync: the store is a fixture).
package storegen
