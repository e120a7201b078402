package session

import "context"

// CheckStore checks every session store lists, as a read finds it, without
// writing anything, for a store that keeps no files (the Postgres store;
// Check walks a JSONL folder's files instead): each log Inspect refuses
// ("damaged-log", or "unreadable-header" for its first line) and what the
// catalog flags in a child's own descriptor, in listing order. Damage.Path
// is the session's id and FrameAt is -1. It fails only when the store
// cannot be listed or ctx is done. It blocks on one read per session.
func CheckStore(ctx context.Context, store Store) ([]Damage, error) {
	headers, err := store.List(ctx)
	if err != nil {
		return nil, err
	}
	c := checker{ids: map[string]string{}}
	for _, h := range headers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		log, err := store.Inspect(ctx, h.ID)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			c.readFailure(h.ID, err)
			continue
		}
		c.descriptors(h.ID, log.Header, log.Events)
	}
	return c.out, nil
}
