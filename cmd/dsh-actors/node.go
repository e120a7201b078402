package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"go.uber.org/goleak"
)

// minLeaseTTL is the shortest --lease-ttl: the store renews every third
// of it, and a renewal is one round trip to the database.
const minLeaseTTL = 100 * time.Millisecond

// nodeFlags are serve's flags for one of several processes on one
// Postgres store: the name its leases carry and their TTL.
type nodeFlags struct {
	name     string        // --node ("": pgstore's host:pid:random)
	leaseTTL time.Duration // --lease-ttl (0 when not given: pgstore's default)
}

// addNodeFlags adds --node and --lease-ttl to flags.
func addNodeFlags(flags *flag.FlagSet, node *nodeFlags) {
	flags.StringVar(&node.name, "node", "", "this process's name in a Postgres store's leases (sessions.owner; default host:pid:random)")
	flags.DurationVar(&node.leaseTTL, "lease-ttl", 0, "how long a Postgres store's lease outlives this process's last renewal "+
		"(renewed every third of it; default 10s); another node takes a dead node's sessions over once it expired")
}

// check refuses node flags given in flags that the store cannot use:
// both name Postgres leases, so a JSONL folder refuses them whatever their
// value; on Postgres a given --node must name something and a given
// --lease-ttl must be at least minLeaseTTL (0 or less included: only
// leaving it out means the default).
func (n nodeFlags) check(store string, flags *flag.FlagSet) error {
	nameSet, ttlSet := isFlagSet(flags, "node"), isFlagSet(flags, "lease-ttl")
	switch {
	case !isPostgres(store) && (nameSet || ttlSet):
		return errors.New("--node and --lease-ttl apply to a Postgres store (--store postgres://...), not to a JSONL folder")
	case nameSet && n.name == "":
		return errors.New(`--node must name this process, got ""`)
	case ttlSet && n.leaseTTL < minLeaseTTL:
		return fmt.Errorf("--lease-ttl must be at least %s, got %s", minLeaseTTL, n.leaseTTL)
	}
	return nil
}

// leakCheck is --leak-check: the goroutines running when it is armed are
// ignored, and verify reports any other still running once the process
// stopped everything it started.
type leakCheck struct{ baseline goleak.Option }

// armLeakCheck snapshots the running goroutines when on, else returns nil.
func armLeakCheck(on bool) *leakCheck {
	if !on {
		return nil
	}
	return &leakCheck{baseline: goleak.IgnoreCurrent()}
}

// verify waits (goleak's retries, a few seconds at most) for every
// goroutine started since the check was armed to end; a goroutine still
// running is printed to stderr and turns status into 1. A nil check
// returns status unchanged.
func (c *leakCheck) verify(status int, stderr io.Writer, name string) int {
	if c == nil {
		return status
	}
	if err := goleak.Find(c.baseline); err != nil {
		fmt.Fprintf(stderr, "dsh-actors %s: leak check: goroutines still running at exit: %v\n", name, err)
		return max(status, 1)
	}
	fmt.Fprintf(stderr, "dsh-actors %s: leak check: no goroutine left\n", name)
	return status
}
