package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/jackc/pgx/v5"
)

// sweepBatch bounds the sessions one sweep takes over.
const sweepBatch = 64

// Sweep takes over every session whose lease expired more than a TTL
// (this store's) ago while its holder still names itself the owner (it
// died, or stalls past twice the TTL: a holder whose renewal is merely
// late keeps its sessions), except those this store holds: Acquire (a new epoch, so the old holder's next
// append is fenced), the repairing Load (the turn it left open closed
// interrupted, under the new lease), Release. A session another store
// takes over meanwhile is skipped. Last it wakes every session with
// pending messages that no one holds live and no drain cut-off closes (the lost wakes: a listener
// that takes it over runs them). It returns the ids taken over; a
// failure on one session does not stop the others.
func (s *Store) Sweep(ctx context.Context) ([]string, error) {
	ids, err := s.abandoned(ctx)
	if err != nil {
		return nil, err
	}
	var swept []string
	var errs []error
	for _, id := range ids {
		took, err := s.takeOver(ctx, id)
		if took {
			swept = append(swept, id)
		}
		errs = append(errs, err)
	}
	_, err = s.wakeOrphans(ctx)
	return swept, errors.Join(append(errs, err)...)
}

// abandoned lists sessions whose lease expired more than a TTL ago and
// was not released, oldest expiry first, less those this store holds.
func (s *Store) abandoned(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM sessions
		WHERE state = 'active' AND owner IS NOT NULL AND lease_until < now() - $2::interval
		ORDER BY lease_until LIMIT $1`, sweepBatch, interval(s.ttl))
	if err != nil {
		return nil, fmt.Errorf("pgstore: sweep: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgstore: sweep: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := ids[:0]
	for _, id := range ids {
		if _, held := s.held[id]; !held {
			kept = append(kept, id)
		}
	}
	return kept, nil
}

// takeOver acquires, repairs and releases id; false (and no error) when
// its lease is live again or it is gone.
func (s *Store) takeOver(ctx context.Context, id string) (bool, error) {
	epoch, err := s.Acquire(ctx, id)
	if err != nil {
		if errors.Is(err, session.ErrNotFound) || errors.Is(err, fault.LeaseHeld) {
			return false, nil
		}
		return false, err
	}
	_, err = s.Load(ctx, id)
	if rerr := s.Release(context.WithoutCancel(ctx), id, epoch); err == nil {
		err = rerr
	}
	if err != nil {
		return true, fmt.Errorf(`pgstore: sweep session "%s": %w`, id, err)
	}
	return true, nil
}
