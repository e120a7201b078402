// Package session holds session logs: the Header and Event types, the
// Store seam with its JSONL implementation, and the live Sessions
// registry.
//
// # On-disk format
//
// The JSONL store reads and writes the original deepseek-harness layout,
// byte for byte, in either of its encodings:
//
//	<root>/<project key of cwd | _no-cwd>/<encoded id>/session.jsonl
//	<root>/<project key of cwd | _no-cwd>/<encoded id>/session.jsonl.zstd
//
// (the encoded id keeps [A-Za-z0-9._-] and writes every other UTF-16 unit
// as ~XXXX).
// The first line is the header ({"type":"session","version":0,...} with the
// original key order, delegationDepth always written, absent optionals
// omitted); every later line is one event
// {type,seq,time,data[,sourceEventSeqs][,surfaceOp][,ignorable]} with seq
// contiguous from 0. JSON is written as JavaScript's JSON.stringify writes
// it (no HTML escaping, U+2028/U+2029 raw). Packed chunk rows
// (text-chunks, reasoning-chunks, tool-call-chunks) written by the original
// are expanded on read; this package never writes them. The legacy flat
// layout is refused with an error matching errUnsupported. A Go string
// cannot keep a lone UTF-16 surrogate, which the original's strings can: a
// header whose id, cwd or parentSession holds one is skipped by List and
// refused by reads (errUnsupported), never read as the U+FFFD string
// that would name another session or folder; the store check reports it.
//
// A Zstandard log (CompressionZstd, the original's default) is a
// concatenation of independent checksummed frames whose plaintext is the
// uncompressed file: the header line alone in the first frame, then one
// frame per durable batch (Create's seed, each group-commit write, a
// repair's closers). A root holds one encoding: WithCompression fixes it,
// otherwise the root's first log decides (an empty root is plain), and a
// log of the other encoding anywhere is refused with an error matching errUnsupported.
// Inside complete frames any defect is fatal (an error matching ErrCorrupt;
// the store check names the frame); only a torn final frame is repaired, keeping
// the lines of its complete blocks.
//
// # Reads
//
// List reads only first lines and skips folders without a valid header.
// Inspect returns the valid stored prefix exactly as stored and never
// writes: a torn tail (an unterminated or unparsable last line, or garbage
// after the last committed turn/end) is tolerated; damage followed by a
// committed turn/end is an error matching ErrCorrupt, naming file and line. Inspect
// accepts unknown event types and refuses only the three
// retired vocabularies (request/header-delta, mode/set, request/header
// with reason "fallback"), which appends refuse too, and message events
// of the wrong shape (user/message, assistant/message, tool/result,
// steering/message: a non-empty id, the right role, a source kind, a
// content array, a model source with provider and model, one tool-result
// block matching the tool source's callId); pre-identity messages are first
// upgraded in memory, never on disk. A header with an empty cwd or a
// retired sandboxMode/approvalPolicy key makes List fail, as does (for
// every lookup, checked once per store) a flat-layout log or a log of the
// other encoding anywhere under the root. Load is the repairing read
// used to resume: it truncates a torn tail (first appending the bytes it
// cuts to <log>.broken beside the log, fsynced, and logging a warning
// naming the file and the byte count) and durably appends the closers of
// an interrupted final turn. Only Load refuses a header whose cwd is
// relative (test snapshot logs carry "{{cwd}}"); List and Inspect read such
// a log. The format is specified in docs/store-format.md.
//
// # Writes and durability
//
// Create publishes a new log atomically (temporary file, fsync, hard link,
// directory fsync). Append uses group commit: one writer per log (only
// while it has work; an uncancellable Append that finds none writes the
// first round itself, then a goroutine takes what is left), concurrent
// appends coalesce into one write and
// one fdatasync, and an append returns only when its batch is durable.
// After answering a batch the writer yields (a bounded number of times, no
// timer) until the answered appenders have queued again, so batches stay
// full instead of alternating between two halves. A
// failed write or sync rolls the file back to its previous size and fails
// the log: every later Append and Flush of it returns an error matching
// ErrLogFailed; an fsync is never retried. A later Load (a resume)
// re-establishes the log: it cuts the file back to its last acknowledged
// size again, syncs it and reads it, so a log failed by a full disk
// takes appends again once there is room, without reopening the store.
//
// # Open files
//
// A log keeps its file open between writes (Create keeps the descriptor it
// wrote the header with), so appends cost one write and one fdatasync, not
// an open and a close as well. The number of logs keeping a file is
// bounded: by default one budget for the whole process, the open-file
// limit less a quarter of it (at least 1,024 descriptors stay for the rest
// of the process); withKeptFiles gives a store its own. A released log
// (one whose live session Sessions.Release ended) keeps its file until another
// log needs its slot or the store closes. When an open still runs out of
// descriptors, the store closes its idle kept files, cuts the budget to
// half the slots in use and retries once. Close closes every kept file.
// Because the file stays open, a log removed or replaced behind the
// store's back is noticed only when it is loaded again (Load closes the
// kept file and the next write opens the file it read).
//
// # Leases
//
// A Fenced store leases each session to one holder at a time: Acquire
// returns an epoch, AppendFenced writes only under the current epoch (a
// stale one is fault.Fenced, nothing written), Release gives it up. The
// JSONL store's lease is a session.lease link in the session's folder to
// the store's owner file, held for as long as the session is live; the
// store locks its owner file until it closes and the kernel drops that
// lock when the process dies, which voids its links: a second process
// (or a second store over the root) is refused the session with
// fault.LeaseHeld, and its Load refuses to repair a log whose lease is
// held elsewhere. Reads (List, Inspect) need no lease. The registry
// acquires a session's lease when it creates or resumes it live, writes
// its events under it and releases it with the session. A lease the
// store finds lost while held (a Postgres renewal sees another holder
// took it over after it expired) fails that live session at once, as a
// write refused with fault.Fenced would: its failure hook hears of it and
// every later append is refused.
//
// # Live sessions
//
// Sessions is the registry of live sessions (the original's ctx.sessions).
// Live.Append is write-behind: the event is in memory at once and a
// per-session flusher (running only while writes are pending) hands it to
// the store (Store.Append; a JSONL store binds each live session to its
// log once, so those writes skip the lookup by id and a second check of
// the payloads Append checked). Live.AppendThrough writes on the calling
// goroutine and returns once durable, for a last event nothing waits
// behind. Sessions.Flush reports true only once everything appended so
// far is durable, and false when there is no store. Subscribe delivers
// Added, Removed and Appended changes.
//
// # Testing
//
// WithFS replaces the file system with another implementation of this
// module's internal sessionfs.FS: its tests install internal/faultfs,
// which fails the Nth sync, makes a write short and then fail with
// ENOSPC, or fails every write as a full disk does.
package session
