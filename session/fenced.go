package session

import (
	"context"

	"github.com/dsh-actors/dsh-actors/internal/durable"
)

// Epoch is one lease of a session: the fencing token its holder writes
// under. Every Acquire of a session returns an epoch greater than the
// ones it returned before; 0 is never an epoch.
type Epoch int64

// Fenced is a Store that leases each session to one holder at a time, so
// that two processes over one store never both write a log. The
// registry (Sessions) uses it when its store has it: it acquires a
// session before creating or resuming it live, writes its events under
// that epoch and releases it with the session.
type Fenced interface {
	Store
	// Acquire takes the lease of the stored session id and returns its
	// new epoch. It fails with fault.LeaseHeld while another holder's
	// lease is live (this process's included) and with ErrNotFound when
	// id is not stored. It does not read the log.
	Acquire(ctx context.Context, id string) (Epoch, error)
	// AppendFenced is Append under epoch: the check that epoch is still
	// the session's current lease is made in the same step that writes,
	// and a stale epoch fails with fault.Fenced having written nothing.
	AppendFenced(ctx context.Context, id string, epoch Epoch, events []Event) error
	// Release waits for the writes made under epoch, then gives the lease
	// up. Releasing an epoch that is not current is a no-op.
	Release(ctx context.Context, id string, epoch Epoch) error
	// Renew extends every lease this store holds, in one round trip, and
	// returns the ids whose lease was lost (taken over after it expired;
	// a lease released meanwhile is not lost); their later appends fail
	// with fault.Fenced.
	Renew(ctx context.Context) (lost []string, err error)
}

// fencedError is the fault.Fenced error of an append to id under a stale
// epoch.
func fencedError(id string, epoch Epoch) error { return durable.Fenced(id, int64(epoch)) }
