package main

import (
	"flag"
	"fmt"
)

// parseFlagsOnly parses args with flags and refuses any positional
// argument, for the subcommands that take flags only.
func parseFlagsOnly(flags *flag.FlagSet, args []string) error {
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	return nil
}
