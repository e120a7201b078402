package index

import (
	"database/sql"

	"github.com/dsh-actors/dsh-actors/session"
)

// headerColumns are the sessions columns scanHeader reads, in its order.
const headerColumns = `id, version, created_at, cwd, parent_session, seed_length, origin, delegation_depth, agent_preset`

type scanner interface{ Scan(dest ...any) error }

func scanHeader(s scanner, extra ...any) (session.Header, error) {
	var h session.Header
	var seed sql.NullInt64
	dest := append([]any{&h.ID, &h.Version, &h.CreatedAt, &h.Cwd, &h.ParentSession, &seed, &h.Origin,
		&h.DelegationDepth, &h.AgentPreset}, extra...)
	if err := s.Scan(dest...); err != nil {
		return session.Header{}, err
	}
	if seed.Valid {
		n := int(seed.Int64)
		h.SeedLength = &n
	}
	return h, nil
}

func seedColumn(seed *int) any {
	if seed == nil {
		return nil
	}
	return int64(*seed)
}

// sameHeader compares every header field (origin and agentPreset too: the
// index returns what the listing returned).
func sameHeader(a, b session.Header) bool {
	sameSeed := (a.SeedLength == nil) == (b.SeedLength == nil) &&
		(a.SeedLength == nil || *a.SeedLength == *b.SeedLength)
	a.SeedLength, b.SeedLength = nil, nil
	return sameSeed && a == b
}
