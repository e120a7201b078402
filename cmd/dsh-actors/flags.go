package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// newFlags is the flag set of the subcommand name: parse errors are
// returned, not printed (usageError prints them with the usage).
func newFlags(name string) *flag.FlagSet {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	return flags
}

// storeFlag adds --store, the session store root (defaultStore()).
func storeFlag(flags *flag.FlagSet) *string {
	return flags.String("store", defaultStore(), "session store root, or a Postgres store (postgres://...)")
}

// compressionFlag adds --compression, the encoding of a new store's logs.
func compressionFlag(flags *flag.FlagSet) *string {
	return flags.String("compression", "", `log encoding of a new store: "zstd" (the default, as the original's) or "none" `+
		"(plain JSONL); an existing store keeps its own, and naming the other one is refused")
}

// checkCompression refuses a --compression value other than "zstd" and
// "none" (the original's config values) or none given.
func checkCompression(s string) error {
	if s != "" && s != "zstd" && s != "none" {
		return fmt.Errorf(`--compression: compression must be "zstd" or "none", got %q`, s)
	}
	return nil
}

// parseFlagsOnly parses args with flags and refuses any positional
// argument, for the subcommands that take flags only.
func parseFlagsOnly(flags *flag.FlagSet, args []string) error {
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	return checkStoreFlag(flags)
}

// isFlagSet reports whether name was given on the command line.
func isFlagSet(flags *flag.FlagSet, name string) bool {
	set := false
	flags.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkStoreFlag refuses a --store given as "" (which would make the
// current folder the store root); both flag parsers call it.
func checkStoreFlag(flags *flag.FlagSet) error {
	var err error
	flags.Visit(func(f *flag.Flag) {
		if f.Name == "store" && f.Value.String() == "" {
			err = errors.New(`--store must name a folder, got ""`)
		}
	})
	return err
}

// descendants is the number of nodes below one root of a tree with fanout
// children per node and depth levels (fanout + fanout² + … + fanout^depth),
// saturating at limit+1 so a huge shape cannot overflow.
func descendants(fanout, depth, limit int) int {
	total, level := 0, 1
	for range depth {
		if level > limit/fanout {
			return limit + 1
		}
		level *= fanout
		if total += level; total > limit {
			return limit + 1
		}
	}
	return total
}

// atMost reports a size flag above its ceiling as a usage error.
func atMost(name string, value, limit int) error {
	if value > limit {
		return fmt.Errorf("--%s must be at most %d, got %d", name, limit, value)
	}
	return nil
}

// noIndexFlag is --no-index: read with the unindexed reader instead of
// the derived index in the store root.
func noIndexFlag(flags *flag.FlagSet) *bool {
	return flags.Bool("no-index", false, "read the logs directly, without the derived index: a SQLite database "+
		"kept under the store root (<store>/session-query.db), derived from the logs and rebuilt when missing")
}
