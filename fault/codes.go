package fault

// The runtime's codes: the actor runtime, its agents and their inboxes.
const (
	// Closed: the runtime's shutdown began; nothing is admitted any more.
	Closed Code = "RUNTIME_CLOSED"
	// InboxClosed: the agent is being disposed or has been disposed.
	InboxClosed Code = "INBOX_CLOSED"
	// InvalidMessage: a message the log could not read back (no source kind).
	InvalidMessage Code = "INVALID_MESSAGE"
	// AgentNotFound: no agent is live under the id.
	AgentNotFound Code = "AGENT_NOT_FOUND"
	// AgentExists: the id is live, or being created or resumed, already.
	AgentExists Code = "AGENT_EXISTS"
	// StaleHandle: the id is live under another incarnation.
	StaleHandle Code = "STALE_HANDLE"
	// RegistryClosed: the live-agent registry no longer starts agents.
	RegistryClosed Code = "REGISTRY_CLOSED"
	// AgentStartFailed: creating or resuming an agent failed and was rolled
	// back; the cause is wrapped.
	AgentStartFailed Code = "AGENT_START_FAILED"
	// OwnedBySubagent: the session belongs to its continuation owner (a
	// continuable child, or a one-shot child while its parent is live);
	// only that owner prompts, cancels or opens it.
	OwnedBySubagent Code = "SESSION_OWNED_BY_SUBAGENT"
	// CwdConflict: a session asked for in one working folder exists with
	// another (or none).
	CwdConflict Code = "SESSION_CWD_CONFLICT"
	// ParentNotLive: the sending parent is no longer the agent live under
	// its id (it left the runtime, or another process took its lease).
	ParentNotLive Code = "PARENT_NOT_LIVE"
)

// The subagent layer's codes.
const (
	DuplicateProvider        Code = "DUPLICATE_PROVIDER"
	NoProvider               Code = "NO_PROVIDER"
	UnsupportedCapability    Code = "UNSUPPORTED_CAPABILITY"
	ContinuationUnavailable  Code = "CONTINUATION_UNAVAILABLE"
	PersistenceUnavailable   Code = "PERSISTENCE_UNAVAILABLE"
	Draining                 Code = "DRAINING"
	Unauthorized             Code = "UNAUTHORIZED"
	ActivationClosing        Code = "ACTIVATION_CLOSING"
	NotResumable             Code = "NOT_RESUMABLE"
	ActivationTeardownFailed Code = "ACTIVATION_TEARDOWN_FAILED"
	DurabilityFailed         Code = "DURABILITY_FAILED"
	SessionQueryUnavailable  Code = "SUBAGENT_CONTROL_SESSION_QUERY_UNAVAILABLE"
	// DepthExceeded: a child would be deeper than the caller's maxDepth
	// cap ("subagent depth <n> exceeds maxDepth <m>").
	DepthExceeded Code = "SUBAGENT_DEPTH_EXCEEDED"
	// InvalidRequest: a request's argument is out of its range (a maxDepth
	// that is not a non-negative safe integer).
	InvalidRequest Code = "INVALID_REQUEST"
	// Cancelled: the caller's context was cancelled (any layer).
	Cancelled Code = "CANCELLED"
)

// The session query's codes, the search's and the derived index's among them.
const (
	QueryEventNotFound     Code = "SESSION_QUERY_EVENT_NOT_FOUND"
	QueryInvalidLineage    Code = "SESSION_QUERY_INVALID_LINEAGE"
	QueryInvalidSurface    Code = "SESSION_QUERY_INVALID_SURFACE"
	QueryInvalidWindow     Code = "SESSION_QUERY_INVALID_WINDOW"
	QueryPersistenceFailed Code = "SESSION_QUERY_PERSISTENCE_FAILED"
	QuerySessionNotFound   Code = "SESSION_QUERY_SESSION_NOT_FOUND"
	QuerySourceConflict    Code = "SESSION_QUERY_SOURCE_CONFLICT"
	// QueryAborted: a search's ctx ended while it ran.
	QueryAborted Code = "SESSION_QUERY_ABORTED"
	// QueryIndexFailed: the derived index could not answer a search or a
	// listing.
	QueryIndexFailed Code = "SESSION_QUERY_INDEX_FAILED"
	// QueryInvalidLimit: a search's limit or offset is out of range.
	QueryInvalidLimit Code = "SESSION_QUERY_INVALID_LIMIT"
	// QueryInvalidQuery: a search query that is blank or holds a NUL.
	QueryInvalidQuery Code = "SESSION_QUERY_INVALID_QUERY"
	// IndexRefused: the derived index file is another application's
	// SQLite file or of a newer schema; it is left alone (move it away, or
	// read the store without the index).
	IndexRefused Code = "INDEX_REFUSED"
)

// The subagent descriptor's codes (a persisted descriptor, or the input of
// a new one).
const (
	// DescriptorCorrupt: a persisted payload of the current version breaks
	// a rule; the catalog lists the child as "corrupt".
	DescriptorCorrupt Code = "SUBAGENT_DESCRIPTOR_CORRUPT"
	// DescriptorUnsupported: a persisted payload of another version; the
	// catalog lists the child as "unsupported".
	DescriptorUnsupported Code = "SUBAGENT_DESCRIPTOR_UNSUPPORTED"
	// DescriptorInvalid: a Snapshot input that cannot become a payload.
	DescriptorInvalid Code = "SUBAGENT_DESCRIPTOR_INVALID"
)

// The store's lease codes: a session is written by one holder at a time.
const (
	// Fenced: an append or release named an epoch that is no longer the
	// session's current lease (another holder took it over, or it was
	// released); nothing of it was written.
	Fenced Code = "FENCED"
	// LeaseHeld: another holder's lease on the session is live, so it
	// cannot be acquired now.
	LeaseHeld Code = "LEASE_HELD"
)
