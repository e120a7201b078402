package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/dsh-actors/dsh-actors/subagent"
)

// Name is the default provider name.
const Name = "acp"

// Permission is how the agent's permission requests are answered.
type Permission string

// The permission policies.
const (
	// Deny rejects every request (the default).
	Deny Permission = "deny"
	// Allow approves every request through an allow option the agent
	// offered.
	Allow Permission = "allow"
)

// defaultGrace is how long Dispose waits for the agent to exit after its
// stdin closed before it kills the process group.
const defaultGrace = 5 * time.Second

// Config configures a provider.
type Config struct {
	// Name is the provider's registry name ("" means Name).
	Name string
	// Command is the agent's executable; Args its arguments.
	Command string
	Args    []string
	// Dir is the agent's working directory and its session's cwd, a
	// relative one taken from this process's directory when New is
	// called; "" means the parent session's cwd (a run whose parent has
	// none fails).
	Dir string
	// Env is added ("KEY=VALUE" entries) to this process's environment
	// for the agent, which has no credential-shaped names (KEY, PASSWORD,
	// SECRET, TOKEN, any case) or DSH_ names: pass those here to give
	// them to the agent, such as its own API key.
	Env []string
	// Permission answers the agent's permission requests ("" means Deny).
	Permission Permission
	// Grace is how long Dispose waits for the agent to exit after closing
	// its stdin before asking it to stop (SIGTERM), and again before
	// killing it (0 means 5s).
	Grace time.Duration
	// Stderr receives the agent's stderr (nil discards it).
	Stderr io.Writer
	// Logger receives the failures a run flattens into its stop reason
	// (nil discards them).
	Logger *slog.Logger
}

// provider is the ACP provider. Its methods are safe for concurrent use.
type provider struct{ cfg Config }

// New validates cfg and returns the ACP provider. It fails naming the field
// when Command is empty, Permission is neither Deny nor Allow, Grace is
// negative or Dir is not a directory. It does not block.
func New(cfg Config) (subagent.Provider, error) {
	if strings.TrimSpace(cfg.Command) == "" {
		return nil, errors.New("subagent/acp: Config.Command must name the agent's executable")
	}
	switch cfg.Permission {
	case "":
		cfg.Permission = Deny
	case Deny, Allow:
	default:
		return nil, fmt.Errorf("subagent/acp: Config.Permission must be %q or %q, got %q", Deny, Allow, cfg.Permission)
	}
	if cfg.Grace < 0 {
		return nil, fmt.Errorf("subagent/acp: Config.Grace must not be negative, got %v", cfg.Grace)
	}
	if cfg.Dir != "" {
		dir, err := filepath.Abs(cfg.Dir)
		if err != nil || !accessibleDir(dir) {
			return nil, fmt.Errorf("subagent/acp: Config.Dir %q is not an accessible directory", cfg.Dir)
		}
		cfg.Dir = dir
	}
	cfg.Name = cmpOr(cfg.Name, Name)
	if cfg.Grace == 0 {
		cfg.Grace = defaultGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &provider{cfg: cfg}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Name is the provider's registry name.
func (p *provider) Name() string { return p.cfg.Name }

// Capabilities are none: the agent runs elsewhere under its own rules.
func (p *provider) Capabilities() subagent.Capabilities { return subagent.Capabilities{} }

// InheritsParentContext is false: no conversation crosses the process
// boundary.
func (p *provider) InheritsParentContext() bool { return false }

// Start starts the agent process, initializes ACP, creates a session and
// sends req's prompt (its text blocks). It blocks until the session exists
// (or ctx ends, or the agent fails or exits first: then the process is
// reaped and the error returned). The run's result settles when the agent
// answers the prompt (its stop reason mapped: end_turn completed,
// cancelled aborted, max_tokens max-tokens, refusal refusal, anything else
// or a broken connection error), or at once as aborted when ctx ends; its
// output is the text the agent streamed. The caller disposes the run.
func (p *provider) Start(ctx context.Context, req subagent.StartRequest) (*subagent.Run, error) {
	if ctx.Err() != nil {
		return nil, errors.New("subagent/acp: the request was cancelled before the agent started")
	}
	dir, err := p.workDir(req)
	if err != nil {
		return nil, err
	}
	child, err := startProcess(p.cfg, dir)
	if err != nil {
		return nil, err
	}
	r := newRemote(p.cfg, child)
	if err := r.open(ctx, dir); err != nil {
		return nil, errors.Join(err, r.teardown(context.Background()))
	}
	run, settle := subagent.NewRun(uuid.NewString(), nil, r.teardown)
	r.prompt(ctx, req.Prompt, settle)
	return run, nil
}

// errNoWorkDir refuses a run with neither Config.Dir nor a parent cwd:
// this process's own directory is no session's workspace.
var errNoWorkDir = errors.New("subagent/acp: no working directory for the child — configure Config.Dir " +
	"or delegate from a parent session that has one")

// workDir is the agent's working directory: Config.Dir, else the parent
// session's cwd, which must be an absolute, accessible directory.
func (p *provider) workDir(req subagent.StartRequest) (string, error) {
	if p.cfg.Dir != "" {
		return p.cfg.Dir, nil
	}
	if req.Parent == nil || req.Parent.Header().Cwd == "" {
		return "", errNoWorkDir
	}
	cwd := req.Parent.Header().Cwd
	switch {
	case !filepath.IsAbs(cwd):
		return "", fmt.Errorf("subagent/acp: parent session cwd must be an absolute path: %s", cwd)
	case !accessibleDir(cwd):
		return "", fmt.Errorf("subagent/acp: parent session cwd is not an accessible directory: %s", cwd)
	}
	return cwd, nil
}

// accessibleDir reports whether path is a directory a process can work
// in: it exists, is a directory, and may be entered.
func accessibleDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir() && mayEnter(path)
}
