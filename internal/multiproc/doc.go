// Package multiproc drives several `dsh-actors serve` processes on one
// PostgreSQL store over loopback and checks, from the database alone,
// what must hold whatever happened to them: a node killed (kill -9) in
// the middle of a turn, paused (SIGSTOP) past its lease TTL and resumed,
// or restarted in turn with the others.
//
// A Node is one serve process (started with --node, --lease-ttl and
// --leak-check) and its RPC client; a Driver sends follow-ups to the
// children of parents homed on nodes that are up and records every
// acknowledged message; Check reads the store (and the lease history
// that InstallHistory records) and reports every invariant broken.
package multiproc
