// Package index is the derived SQLite index of a session store and the
// session search built on it. It lives in the store root as
// session-query.db (FileName) and holds, per stored session, its header
// fields and the revision of its log; per direct child, the catalog
// outcome of its descriptor (child with its label, corrupt, unsupported,
// or omitted); per session, its title and its searchable text (an FTS5
// table, unicode61 tokens).
//
// The index is derived state only and never an authority. Every use first
// reconciles it against the store: the root is walked (one directory read
// per project folder, one stat per log) and every log whose revision
// (device, inode, size, mtime and ctime) differs from the indexed one is
// read again; any change in the folder structure, or a changed first line,
// makes it take the store's own listing (Store.List) again, so new,
// changed and removed logs are all seen. Logs are read only with the
// non-mutating Store.Inspect, never the repairing Load.
//
// A process's first listing skips that walk when it can: each
// reconciliation leaves a checkpoint in the index (the stamps and entry
// fingerprints of the root and project folders, and the session folders
// holding no listed session), and while those are unchanged the listing
// is the indexed one, since a session's header is written once and never
// rewritten. That listing then costs one stat of the root and of each
// project folder plus one stat per log the answer depends on (the
// parent's lineage and its direct children), and watches no folder: a
// one-shot command pays O(children). Later listings of the same handle
// watch the folders they depend on (inotify).
//
// DB.ListChildren answers exactly as query.ListChildren over the unindexed
// query does: healthy stores are answered from the index, and everything
// else (a failing listing, a source conflict, an unknown parent, a lineage
// cycle, a per-child read that is not a stable diagnostic) is handed to the
// unindexed reader, whose answer is returned as it is. Live children are
// always read live. The index never lists a session the store's listing
// does not.
//
// The file is rebuilt when it is missing, empty, corrupt or of an older
// schema; a file of a newer schema, or another application's SQLite file,
// is refused with an error naming it (matching fault.IndexRefused). Several
// processes may open one store: SQLite's WAL journal and BEGIN IMMEDIATE
// transactions keep the file consistent, and each process reconciles on
// its own.
package index
