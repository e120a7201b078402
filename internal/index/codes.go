package index

import "github.com/dsh-actors/dsh-actors/fault"

// The derived index's codes: one fault.Code type with every other layer's,
// so errors.Is matches them however wrapped. The search RPC answers the
// invalid ones as bad requests.
const (
	// IndexRefused: the index file is another application's SQLite file
	// or of a newer schema; it is left alone (move it away, or read the
	// store without the index).
	IndexRefused fault.Code = "INDEX_REFUSED"
	// QueryAborted: a search's ctx ended while it ran.
	QueryAborted fault.Code = "SESSION_QUERY_ABORTED"
	// QueryIndexFailed: the index could not answer a search or a listing.
	QueryIndexFailed fault.Code = "SESSION_QUERY_INDEX_FAILED"
	// QueryInvalidLimit: a search's limit is out of range.
	QueryInvalidLimit fault.Code = "SESSION_QUERY_INVALID_LIMIT"
	// QueryInvalidQuery: a search query that is blank or holds a NUL.
	QueryInvalidQuery fault.Code = "SESSION_QUERY_INVALID_QUERY"
)
