// Package query is the session query (trace, list and read the events of
// live and stored sessions) and the stateless catalog reader built on it.
//
// # Session query
//
// A *Query (New) reads the live-first merge of the live registry
// (session.Sessions) and its persistence store:
//
//   - ListEvents: one session's raw events, each classified current,
//     shadowed or log-only by the surface fold;
//   - ReadSession: a whole detached log, without surface validation (for
//     display).
//
// Inside the package, the catalog reader traces a session's lineage with
// one observation of the whole corpus (Store.List, no Inspect; siblings
// ordered by createdAt then id) and reads one event with a bounded window
// and the session header.
//
// A live session is read from memory and never from the store. A stored one
// is read with the non-mutating Store.Inspect, never the repairing Load, so
// the query never writes. Failures are *fault.Error values carrying the
// SESSION_QUERY_* codes and messages; a done context returns
// context.Cause(ctx) itself, as the original rejects with the signal's
// reason.
//
// Differences from the original, all invisible to ListChildren's results:
// siblings whose ids collate equal (canonically equivalent forms) are
// ordered by bytes where the original kept the store's listing order; a
// per-session read does one direct Store.Inspect instead of re-listing the whole store first (the
// store's ErrNotFound gives SESSION_QUERY_SESSION_NOT_FOUND, as a missing
// listing entry did, and the store is listed only after a failed read, so
// that an unlistable log is not found and a failing listing is reported as
// such), which turns a relist-per-read O(D×C + ΣL) listing cost into O(C + ΣL),
// but lets a readable log be read even when another log of the root would
// make the listing fail; ListEvents takes a context although the
// original's took no signal.
//
// # Catalog
//
// ListChildren lists a parent's direct continuable children
// through any Querier: it traces the parent, reads each direct child's
// events, and validates its single own-suffix subagent/descriptor with an
// exact re-read. Children become Entry values (status running when live,
// complete when stored only) and unreadable or invalid ones become
// diagnostics (corrupt, unsupported, unavailable); RenderListAgents gives
// the list_agents text; InspectChild is its step for one child, for the
// catalogs beside the store that answer as it does (their other shared
// steps, the order of siblings and the cancellation checkpoint, are this
// module's internal catalog package). Listing never creates an agent,
// never touches an activation and never writes storage; this package
// imports only session, descriptor and that internal package.
package query
