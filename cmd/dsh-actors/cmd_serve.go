package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/host"
	"github.com/dsh-actors/dsh-actors/modelagent"
)

const serveUsage = "usage: dsh-actors serve [--store DIR|postgres://...] [--compression zstd|none] [--addr 127.0.0.1:7410] [--token TOKEN] [--cwd-root DIR] " + modelUsage + " [--no-index] [--node NAME] [--lease-ttl 10s] [--durable-admission] [--leak-check] [--acp NAME=COMMAND]..."

// httpShutdownGrace bounds the wait for in-flight requests at shutdown.
const httpShutdownGrace = 10 * time.Second

// runServe serves the web page and its RPC over the runtime on the JSONL
// store until ctx is cancelled (the first SIGINT/SIGTERM), then stops the
// HTTP server, drains every agent child-first and flushes. A second signal
// during that shutdown exits at once with status 1. With --leak-check it
// then waits for every goroutine it started to end, and reports one that
// does not on stderr with status 1.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags, status := parseServeFlags(args, stderr)
	if status >= 0 {
		return status
	}
	leaks := armLeakCheck(flags.leakCheck)
	return leaks.verify(serve(ctx, flags, stdout, stderr), stderr, "serve")
}

// serve runs the stack of flags until ctx is cancelled, then shuts it
// down; it returns the exit status.
func serve(ctx context.Context, flags serveFlags, stdout, stderr io.Writer) int {
	agents, err := flags.model.agents(slog.New(slog.NewTextHandler(stderr, nil)), flags.acp.delegations())
	if err != nil {
		return failure(stderr, "serve", err)
	}
	defer closeAgents(agents)
	listener, err := net.Listen("tcp", flags.addr)
	if err != nil {
		return failure(stderr, "serve", fmt.Errorf("cannot listen on %s: %w", flags.addr, err))
	}
	logger := warnLogger(stderr)
	pageURL, trusted := pageAuthority(listener.Addr().(*net.TCPAddr))
	stack, err := openServeStack(flags, logger, trusted, agents)
	if err != nil {
		listener.Close()
		return failure(stderr, "serve", err)
	}
	fmt.Fprintf(stdout, "dsh-actors: serving %s (store %s; page with its token: %s#token=%s)\n", pageURL, flags.store, pageURL, stack.token)
	if len(trusted) > 0 || listener.Addr().(*net.TCPAddr).IP.IsUnspecified() {
		fmt.Fprintf(stderr, "dsh-actors serve: listening beyond this machine on %s: a request from another machine must carry \"Authorization: Bearer <token>\"\n", listener.Addr())
	}
	served := serveHTTP(stack.handler, listener)
	select {
	case <-ctx.Done():
	case err := <-served.failed:
		fmt.Fprintf(stderr, "dsh-actors serve: %v\n", err)
	}
	return stack.stop(served.server, stdout, stderr)
}

// serveFlags are serve's parsed flags.
type serveFlags struct {
	store, addr string
	model       modelFlags
	indexed     bool   // false with --no-index
	leakCheck   bool   // --leak-check
	token       string // --token or $DSH_ACTORS_TOKEN; "": the store's
	cwdRoot     string // --cwd-root: session.create's cwds lie in it ("": anywhere)
	acp         *acpAgents
	node        nodeFlags
	storeChoice storeChoice
}

// parseServeFlags reads --store, --compression, --addr, --model,
// --no-index, --node, --lease-ttl, --durable-admission and --leak-check; on a usage error (including a malformed --addr) or --help it
// prints the usage and returns the exit status, else -1.
func parseServeFlags(args []string, stderr io.Writer) (parsed serveFlags, status int) {
	flags := newFlags("serve")
	storeRoot := storeFlag(flags)
	compression := compressionFlag(flags)
	model := addModelFlags(flags)
	noIndex := noIndexFlag(flags)
	parsed.acp = acpFlag(flags, stderr)
	flags.StringVar(&parsed.addr, "addr", "127.0.0.1:7410", "listen address (host:port)")
	flags.BoolVar(&parsed.leakCheck, "leak-check", false, "at exit, wait for every goroutine serve started to end; report one that does not (exit status 1)")
	addNodeFlags(flags, &parsed.node)
	token := flags.String("token", "", "the bearer token a request from another machine must carry (at least 16 visible characters; "+
		"default: $"+tokenEnv+", else one made at the first start in a store folder and kept in it, or made at each start on Postgres)")
	workDir, _ := os.Getwd()
	flags.StringVar(&parsed.cwdRoot, "cwd-root", workDir, "the folder the cwd a client asks session.create for must lie in (/ for anywhere)")
	durableAdmission := flags.Bool("durable-admission", false, "acknowledge a follow-up, or a prompt to a top-level session, only once it is fsynced to the session's inbox file, "+
		"and run what a crash left unrun when the child resumes (a JSONL store, which keeps the mode once given: "+
		"every later serve, send or run on it admits durably and runs what is pending first; a Postgres store always admits durably)")
	err := parseFlagsOnly(flags, args)
	if err == nil {
		err = checkListenAddr(parsed.addr)
	}
	if err == nil {
		err = parsed.node.check(*storeRoot, flags)
	}
	if err == nil {
		parsed.token, err = givenToken(*token, isFlagSet(flags, "token"))
	}
	if err == nil && !filepath.IsAbs(parsed.cwdRoot) {
		err = fmt.Errorf("--cwd-root must be an absolute path, got %q", parsed.cwdRoot)
	}
	if err == nil {
		err = checkCompression(*compression)
	}
	parsed.storeChoice = storeChoice{compression: *compression, durable: *durableAdmission && !isPostgres(*storeRoot)}
	if err != nil {
		return serveFlags{}, usageError(stderr, serveUsage, flags, err)
	}
	parsed.store, parsed.model, parsed.indexed = *storeRoot, *model, !*noIndex
	return parsed, -1
}

// checkListenAddr refuses an --addr that is not host:port with a port
// number (or service name) in range, before anything is opened.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf("--addr %q is not host:port: %w", addr, err)
	}
	return nil
}

// serveStack is the runtime and the web handler over it.
type serveStack struct {
	rt      *dsh.Runtime
	handler *host.Handler
	token   string // the bearer token the handler wants from other machines
}

// pageAuthority is the URL to print for the bound address and the Host
// authorities the page's RPC must trust beyond loopback: none for a
// loopback or wildcard bind (printed as 127.0.0.1), else exactly the bound
// address.
func pageAuthority(bound *net.TCPAddr) (string, []string) {
	if bound.IP.IsLoopback() || bound.IP.IsUnspecified() {
		loopback := net.JoinHostPort("127.0.0.1", strconv.Itoa(bound.Port))
		if bound.IP.IsLoopback() {
			loopback = bound.String()
		}
		return "http://" + loopback + "/", nil
	}
	return "http://" + bound.String() + "/", []string{bound.String()}
}

// openServeStack opens the runtime on the store with the scripted agent
// (or the model agents) and the host handler over it. Indexed, on a JSONL
// store folder, subagent.list, session.search and the titles of stored
// sessions in session.list are answered by the derived index in the
// folder, unless it cannot be opened: then serve warns and reads the logs.
func openServeStack(flags serveFlags, logger *slog.Logger, trustedHosts []string, agents *modelagent.Agents) (*serveStack, error) {
	opts := dsh.Options{Logger: logger, ModelAgents: agents, ACPAgents: flags.acp.options(),
		Node: flags.node.name, LeaseTTL: flags.node.leaseTTL, NoIndex: !flags.indexed}
	rt, err := openRuntime(flags.store, opts, flags.storeChoice)
	if err != nil {
		return nil, err
	}
	if flags.indexed && !isPostgres(flags.store) && !indexOpens(rt, flags.store, logger) {
		_ = rt.Close()
		opts.NoIndex = true
		if rt, err = openRuntime(flags.store, opts, flags.storeChoice); err != nil {
			return nil, err
		}
	}
	token := flags.token
	if token == "" {
		if token, err = storeToken(flags.store); err != nil {
			_ = rt.Close()
			return nil, err
		}
	}
	handler := host.New(rt, host.Options{Logger: logger, TrustedHosts: trustedHosts, Token: token, CwdRoot: flags.cwdRoot})
	return &serveStack{rt: rt, handler: handler, token: token}, nil
}

// indexFile is the derived index's file in a JSONL store folder, as
// dsh.Options.NoIndex names it.
const indexFile = "session-query.db"

// indexOpens reports whether the derived index of rt's JSONL store folder
// root opens, by one search: the first search opens (or builds) the index
// and brings it up to date, and it fails only when the index cannot be
// opened or, after the index failed it, the logs cannot be read either.
// When it fails (a full disk, a damaged or foreign file) it logs why at
// Warn: the index is derived state, and serve serves the logs without it.
// It blocks on the index's update.
func indexOpens(rt *dsh.Runtime, root string, logger *slog.Logger) bool {
	_, err := rt.Search(context.Background(), dsh.SearchRequest{Phrase: "index", Limit: 1})
	if err != nil {
		logger.Warn("serve: the derived index cannot be opened; serving from the logs without it",
			"path", filepath.Join(root, indexFile), "err", err)
		return false
	}
	return true
}

// stop announces the shutdown, arms the forced exit on a second signal and
// shuts down; it returns the exit status.
func (s *serveStack) stop(server *http.Server, stdout, stderr io.Writer) int {
	defer exitOnSecondSignal(stderr, "serve")()
	fmt.Fprintln(stdout, "dsh-actors: shutting down (press Ctrl-C again to force)")
	if err := s.shutdown(server); err != nil {
		return failure(stderr, "serve", fmt.Errorf("shutdown: %w", err))
	}
	fmt.Fprintln(stdout, "dsh-actors: stopped")
	return 0
}

// shutdown ends the event streams, stops accepting and waits for in-flight
// requests (bounded), then closes the runtime: the subagent drain and the
// child-first disposal of every agent, then the flush of every session.
func (s *serveStack) shutdown(server *http.Server) error {
	s.handler.Close()
	graceful, cancel := context.WithTimeout(context.Background(), httpShutdownGrace)
	defer cancel()
	if err := server.Shutdown(graceful); err != nil {
		_ = server.Close()
	}
	return s.rt.Close()
}

// servedHTTP is a running http.Server and its unexpected failure.
type servedHTTP struct {
	server *http.Server
	failed chan error
}

func serveHTTP(handler http.Handler, listener net.Listener) servedHTTP {
	s := servedHTTP{server: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}, failed: make(chan error, 1)}
	go func() {
		if err := s.server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
			s.failed <- err
		}
	}()
	return s
}

// exitOnSecondSignal makes the next SIGINT/SIGTERM exit the process with
// status 1 at once; the returned stop ends that watch.
func exitOnSecondSignal(stderr io.Writer, name string) (stop func()) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-signals:
			fmt.Fprintf(stderr, "dsh-actors %s: forced exit\n", name)
			os.Exit(1)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(signals)
		close(done)
	}
}
