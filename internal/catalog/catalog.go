// Package catalog holds the steps of the catalog's listing that need no
// session query, shared by the query's catalog reader and the catalogs
// that answer exactly as it does (the derived index, the Postgres store):
// a Record of the live-first merge, the order of siblings, the header
// comparison of the merge and the cancellation checkpoint. It is internal
// so that these steps stay off query's exported surface. Nothing here
// blocks.
package catalog

import (
	"cmp"
	"context"
	"strings"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
)

// Record is one logical session of the corpus: its header (the live one
// wins), whether it is live in the registry now, and whether the store
// listed it. No record has both flags false.
type Record struct {
	Header    session.Header
	Live      bool
	Persisted bool
}

// Checkpoint is the catalog's cancellation check: CANCELLED ("subagent
// listing was cancelled", wrapping ctx's cause) once ctx is done, else
// nil.
func Checkpoint(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return fault.New(fault.Cancelled, "subagent listing was cancelled", context.Cause(ctx))
}

// CompatibleHeaders reports SESSION_QUERY_SOURCE_CONFLICT unless a and b
// agree on the immutable fields the live-first merge compares (version, id,
// createdAt, cwd, parentSession, seedLength, delegationDepth).
func CompatibleHeaders(a, b session.Header) error {
	if a.Version != b.Version || a.ID != b.ID || a.CreatedAt != b.CreatedAt ||
		a.Cwd != b.Cwd || a.ParentSession != b.ParentSession ||
		!sameSeedLength(a.SeedLength, b.SeedLength) || a.DelegationDepth != b.DelegationDepth {
		return fault.New(fault.QuerySourceConflict, `session source headers conflict for session "`+a.ID+`"`, nil)
	}
	return nil
}

func sameSeedLength(a, b *int) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// SiblingOrder is the trace's order of siblings: createdAt ascending, then
// id as the original's localeCompare orders ids.
func SiblingOrder(a, b Record) int {
	if c := cmp.Compare(a.Header.CreatedAt, b.Header.CreatedAt); c != 0 {
		return c
	}
	return localeCompare(a.Header.ID, b.Header.ID)
}

// collators holds root-locale collators for localeCompare; a Collator
// keeps scratch buffers and is not safe for concurrent use.
var collators = sync.Pool{New: func() any { return collate.New(language.Und) }}

// localeCompare orders ids as JavaScript's a.localeCompare(b) does in the
// original (ICU's root collation): "a" < "A" < "b", "a_b" < "a-b" < "ab",
// "é" < "f". Ids that collate equal (canonically equivalent forms,
// ignorable characters) fall back to byte order, so the order stays total
// where the original kept the store's listing order.
func localeCompare(a, b string) int {
	c := collators.Get().(*collate.Collator)
	defer collators.Put(c)
	if r := c.CompareString(a, b); r != 0 {
		return r
	}
	return strings.Compare(a, b)
}
