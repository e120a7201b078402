// Command dsh-actors is the CLI of the dsh-actors runtime: serve the web
// page, run the demo, list and show stored sessions, send more work to a
// stored subagent, stress and benchmark.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
)

// command is one subcommand. run gets the arguments after the subcommand
// name and returns the process exit status.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands are the subcommands by name; each one's run lives in its own
// cmd_NAME.go file.
var commands = map[string]command{
	"acp":    {"serve one dsh agent per session over ACP on stdin/stdout (for editors and ACP clients)", runACP},
	"bench":  {"measure the runtime against bare protoactor and raw channels/files, as ratios in one run", runBench},
	"check":  {"report damaged logs, unreadable headers, leftover files (read-only)", runCheck},
	"demo":   {"a scripted agent grows, talks to and drains a small subagent tree", runDemo},
	"export": {"copy every session of a Postgres store into the JSONL layout", runExport},
	"import": {"copy every log of a JSONL store into a Postgres store", runImport},
	"list":   {"list a session's direct continuable subagents (read-only)", runList},
	"run":    {"run one top-level turn in the terminal, printing the reply as it streams", runRun},
	"search": {"search stored sessions for a literal phrase (read-only)", runSearch},
	"send":   {"send more work to a stored continuable subagent and print its reply", runSend},
	"serve":  {"run the runtime and its web page until SIGINT/SIGTERM", runServe},
	"show":   {"print a stored session's transcript (read-only)", runShow},
	"stress": {"race follow-ups against settlements and scoped drains; check every invariant", runStress},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// dispatch runs the subcommand named by args[0]; a missing or unknown one is
// a usage error (exit 2). Asking for help (-h, --help or help alone, or
// either flag among a command's arguments before "--") prints the usage on
// stdout and exits 0.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if isHelpFlag(args[0]) || args[0] == "help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "dsh-actors: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	if asksForHelp(args[1:]) {
		// The command's flag parsing stops at the help flag and prints its
		// usage to what it takes as stderr (usageError), exiting 0.
		stderr = stdout
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
}

// asksForHelp reports whether a help flag comes before any "--" in args.
func asksForHelp(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			return false
		}
		if isHelpFlag(arg) {
			return true
		}
	}
	return false
}

// isHelpFlag is the flag package's help flag in any of its spellings.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dsh-actors <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
	}
}

// defaultStore is the session root used when --store is not given:
// $DSH_ACTORS_HOME/sessions, else ./.dsh-actors/sessions.
func defaultStore() string {
	if home := os.Getenv("DSH_ACTORS_HOME"); home != "" {
		return filepath.Join(home, "sessions")
	}
	return filepath.Join(".dsh-actors", "sessions")
}
