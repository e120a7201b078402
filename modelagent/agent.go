package modelagent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/actors"
	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/subagent"
)

// defaultSystem is the system prompt of a Config without one.
const defaultSystem = "You are an agent. You can hand work to subagents with the subagent and " +
	"subagent_fork tools (in the background when it should run on its own), send your background " +
	"subagents more work with send_message and list them with list_agents. Answer the user directly " +
	"when no tool is needed."

// defaultMaxDepth is the delegation cap of a Config without one.
const defaultMaxDepth = 3

// Config configures the model agents and the OpenAI-compatible
// chat-completions endpoint they stream from (DeepSeek's by default).
type Config struct {
	// BaseURL is the endpoint, http(s)://host[:port][/path];
	// "/chat/completions" is appended (default: $OPENAI_BASE_URL for the
	// openai API, else $DEEPSEEK_BASE_URL, else https://api.deepseek.com).
	BaseURL string
	// API is the server's profile: "deepseek" (thinking and
	// reasoning_effort fields, no response_format json_schema) or
	// "openai" (any other OpenAI-compatible server: Ollama, vLLM, ...).
	// Default: deepseek for a DeepSeek host or a base URL from
	// $DEEPSEEK_BASE_URL, openai for any other BaseURL.
	API string
	// APIKey is sent as a bearer token (default: $DEEPSEEK_API_KEY for
	// the deepseek API, where a key is required; $OPENAI_API_KEY, maybe
	// none, for openai).
	APIKey string
	// ContextWindow is the model's context size in tokens, logged in
	// request/context; a response whose prompt reached it logs a warning
	// (the server may have cut the prompt). Default: 1,000,000 for the
	// deepseek API, unknown (nothing logged) for openai.
	ContextWindow int
	// Logger gets the startup line (model, API, base URL) and warnings
	// (default: slog.Default()).
	Logger *slog.Logger
	// IdleTimeout fails a model call with TIMEOUT when the server sends
	// nothing for this long (default 300 seconds).
	IdleTimeout time.Duration
	// Provider is the route name logged for requests and assistant
	// messages (default "deepseek-official" for the deepseek API,
	// "openai-compatible" for openai).
	Provider string
	// Model is the wire model name of the agents started with these
	// agents as their route; an agent whose options name another model
	// (a stored child whose descriptor names it) uses that one. Empty
	// Agents start no agent of their own: they only rebuild stored agents
	// of Provider, each with the model it names.
	Model string
	// System is the system prompt (default: a short prompt saying the
	// agent may hand work to subagents with the subagent tools). A child
	// started with a persona is sent its persona instead, on every turn
	// and every resume.
	System string
	// MaxDepth caps how deep delegation may go (default 3).
	MaxDepth int
	// Retry decides retries of failed model calls (default: normal mode,
	// two retries of EMPTY_RESPONSE, RATE_LIMIT, SERVER, TIMEOUT and
	// TRANSPORT, from 500 ms up to 10 s, with 10% jitter).
	Retry *RetryPolicy
	// Tools are the embedder's own tools, offered after the built-in ones
	// in this order.
	Tools []Tool
	// BackgroundTasks makes run_in_background of subagent and
	// subagent_fork start a one-shot child as a background task (ids
	// "subagent-N", reachable only by the agent that started it) instead
	// of a continuable child, and offers task_output, task_list and
	// task_kill. A task that ends unread is announced to its agent as a
	// user message from the plugin "tool-tasks" that starts no turn: in
	// its log at once when the agent is idle, else before its next step or
	// at the end of its turn.
	BackgroundTasks bool
	// Delegations mount the subagent tool once more per entry, tool name
	// to provider name, in tool-name order after subagent_fork (naming
	// subagent or subagent_fork rebinds that tool instead): the same
	// parameters and results, worded for whether the provider's children
	// see the parent's conversation. A tool is offered only while its
	// provider is registered on the subagent service; the delegation cap
	// is sent only to a provider enforcing it; run_in_background starts a
	// continuable child only through a provider that prepares them while
	// BackgroundTasks is off, else a one-shot background task (refused
	// without BackgroundTasks).
	Delegations map[string]string
	// MCPServers are MCP servers by name (ReadMCPConfig reads them from a
	// file): each tool of server S is offered as mcp__S__<tool>, after
	// the Tools. New starts them in the background; Close stops them.
	MCPServers map[string]MCPServer
}

// Agents builds model agents: each runs the tool loop over its own
// conversation, with the four subagent tools bound to itself.
type Agents struct {
	cfg    Config
	client llm.Client
	// custom are cfg.Tools compiled.
	custom []toolDef
	// mcp runs cfg.MCPServers (nil: none).
	mcp       *mcpHub
	closeOnce sync.Once
	// random samples the retry jitter in [0, 1].
	random  func() float64
	mu      sync.Mutex
	rt      *actors.Runtime
	service *subagent.Service
	// tasks are the background tasks (nil unless Config.BackgroundTasks).
	tasks *tasks
	// unsubscribe ends the bound runtime's subscription (nil: none).
	unsubscribe func()
}

// New returns the model agents of cfg over a client of cfg's endpoint
// (its unset BaseURL and APIKey read from the environment) and logs the
// model, API and base URL. The deepseek API gets DeepSeek's request
// defaults (a 256,000-token response cap, high reasoning effort, a
// 1,000,000-token context); openai gets none. It fails
// with INVALID_CONFIG for an unknown API or a base URL that is not
// http(s)://host[/path], with MISSING_CREDENTIAL without a DeepSeek API
// key, or when a tool of cfg.Tools has a bad or taken name or bad
// parameters; it does not block. Give
// the agents to dsh.Options.ModelAgents, which binds them; over an actor
// runtime of your own, Bind them before the first turn.
func New(cfg Config) (*Agents, error) {
	server, err := endpoint(cfg)
	if err != nil {
		return nil, err
	}
	client, err := llm.NewDeepSeek(server)
	if err != nil {
		return nil, err
	}
	cfg.Provider = cmp.Or(cfg.Provider, defaultProvider(server.Profile))
	a, err := newAgents(cfg, client, rand.Float64)
	if err != nil {
		return nil, err
	}
	announce(a.cfg.Logger, a.cfg, client)
	return a, nil
}

// newAgents returns the model agents of cfg over client, sampling the
// retry jitter with random; cfg's endpoint fields are not used. It fails
// as New does for cfg.Tools.
func newAgents(cfg Config, client llm.Client, random func() float64) (*Agents, error) {
	if err := checkDelegations(cfg.Delegations); err != nil {
		return nil, err
	}
	custom, err := compileTools(cfg.Tools, cfg.Delegations)
	if err != nil {
		return nil, err
	}
	if err := checkMCPServers(cfg.MCPServers); err != nil {
		return nil, fmt.Errorf("modelagent: %w", err)
	}
	if cfg.Provider == "" {
		cfg.Provider = llm.DefaultProvider
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.System == "" {
		cfg.System = defaultSystem
	}
	if cfg.MaxDepth == 0 {
		cfg.MaxDepth = defaultMaxDepth
	}
	if cfg.Retry == nil {
		p := defaultRetryPolicy()
		cfg.Retry = &p
	}
	a := &Agents{cfg: cfg, client: client, random: random, custom: custom}
	if cfg.BackgroundTasks {
		a.tasks = newTasks()
	}
	if len(cfg.MCPServers) > 0 {
		a.mcp = startMCP(cfg.MCPServers, cfg.Logger)
	}
	return a, nil
}

// Close stops the MCP servers: it closes their sessions, ends the
// processes of stdio servers and waits for the goroutines that ran them.
// Their tools then fail. Close the agents after the runtime that runs
// them; it is idempotent.
//
// With background tasks, Close also cancels every live task (reason "tasks
// service disposed") and waits until each has settled, its run disposed.
func (a *Agents) Close() error {
	a.closeOnce.Do(func() {
		a.mcp.close()
		a.Bind(nil, nil)
		if a.tasks != nil {
			a.tasks.disposeAll()
		}
	})
	return nil
}

// Route is the provider and model the agents are attributed to (give them
// to actors.Options so that the runtime logs the same); the model is empty
// for Agents that only rebuild stored agents (Config.Model).
func (a *Agents) Route() (provider, model string) { return a.cfg.Provider, a.cfg.Model }

// Bind gives the agents the runtime they run on (to find the calling agent)
// and the subagent service their tools use. Either may be nil: the
// subagent tools then fail with "requires a calling agent".
//
// With background tasks, an agent's disposal on rt then cancels its tasks
// (reason "owner disposed") and waits until each has settled.
func (a *Agents) Bind(rt *actors.Runtime, service *subagent.Service) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rt, a.service = rt, service
	if a.unsubscribe != nil {
		a.unsubscribe()
		a.unsubscribe = nil
	}
	if rt != nil && a.tasks != nil {
		a.unsubscribe = rt.Registry().Subscribe(func(e parent.Event) {
			if e.Type == parent.EventDisposed {
				a.tasks.ownerDisposed(e.AgentID, e.Incarnation)
			}
		})
	}
}

func (a *Agents) bound() (*actors.Runtime, *subagent.Service) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rt, a.service
}

// Factory builds the agent of one live agent; it has the agent.Factory
// signature and does not block.
func (a *Agents) Factory(opts agent.Options) agent.Agent {
	l := &loop{a: a, opts: opts, provider: a.cfg.Provider, model: a.cfg.Model}
	if opts.Model != "" && opts.Model != vocab.DefaultModel {
		l.provider, l.model = orDefault(opts.Provider, a.cfg.Provider), opts.Model
	}
	return l
}

func orDefault(s, fallback string) string {
	if s == "" || s == vocab.DefaultProvider {
		return fallback
	}
	return s
}

// loop is one live agent's model loop. Its turns run one at a time.
type loop struct {
	a               *Agents
	opts            agent.Options
	provider, model string
	// What the log holds of the request: the last header (its JSON, nil
	// for none) and context logged, read from the log before this
	// instance's first step; loggedHere once this instance logged one.
	scanned    bool
	header     []byte
	loggedHere bool
	logged     vocab.Header // the header whose JSON is header, once loggedHere
	context    *vocab.RequestContext
	// A structured answer: the last assistant text and whether it was
	// asked again.
	lastText string
	reasked  bool
	// The retry chain: retries is the last llm/retry's number since the
	// last successful model call, and retrying the id of the message whose
	// turn asked for a retry turn ("" when none did).
	retries  int
	retrying string
}

// RunTurn runs steps until the model stops calling tools: each step sends
// the conversation to the model, logs the streamed chunks and the
// assistant message, then runs the calls it made. A failed model call the
// policy retries ends the step, logs llm/retry, waits the delay and ends
// the turn with agent.Retry and the failure (the runtime then runs the
// same message as a retry turn); any other failure ends the turn with it.
func (l *loop) RunTurn(ctx context.Context, host agent.Host, msg event.UserMessage) (agent.StopReason, error) {
	if msg.ID != l.retrying { // not a retry turn: a new chain
		l.retries = 0
	}
	l.retrying = ""
	l.reasked = false
	self, tools, err := l.tools(ctx, host)
	if err != nil {
		return agent.Error, err
	}
	stop, err := l.steps(ctx, host, msg.ID, self, tools)
	if heldErr := l.deliverHeld(self); heldErr != nil && err == nil {
		return agent.Error, heldErr
	}
	return stop, err
}

// steps runs the turn's steps until one ends it.
func (l *loop) steps(ctx context.Context, host agent.Host, msgID string, self *parent.Handle, tools *registry) (agent.StopReason, error) {
	for {
		next, stop, err := l.step(ctx, host, self, tools)
		if stop == agent.Retry {
			l.retrying = msgID
		}
		if err == nil && !next {
			next, stop, err = l.endStructured(self, stop)
		}
		if err != nil || !next {
			return stop, err
		}
	}
}

// deliverHeld logs the task completion notices held for the agent self
// (none without background tasks).
func (l *loop) deliverHeld(self *parent.Handle) error {
	if l.a.tasks == nil || self == nil {
		return nil
	}
	return l.a.tasks.deliverHeld(self)
}

// tools is the registry of the calling agent: the subagent tools (the
// delegation tools as bound now), the task tools, and the embedder's,
// filtered by the agent's options.
func (l *loop) tools(ctx context.Context, host agent.Host) (*parent.Handle, *registry, error) {
	rt, service := l.a.bound()
	var self *parent.Handle
	if rt != nil {
		self = rt.Registry().Get(host.SessionID())
	}
	c := caller{service: service, self: self, maxDepth: l.a.cfg.MaxDepth, tasks: l.a.tasks,
		bindings: l.a.bindings(service)}
	if service == nil {
		c.self = nil
	}
	builtins := subagentTools(c)
	if c.tasks != nil {
		builtins = append(builtins, taskTools(c)...)
	}
	var kept []toolDef
	for _, t := range builtins {
		if allowed(l.opts.ToolFilter, t.Name) {
			kept = append(kept, t)
		}
	}
	for _, t := range l.a.custom {
		if allowed(l.opts.ToolFilter, t.Name) {
			kept = append(kept, t.bind(l.opts.SessionID))
		}
	}
	for _, t := range l.a.mcp.tools(ctx) {
		if allowed(l.opts.ToolFilter, t.Name) {
			kept = append(kept, t)
		}
	}
	reg, err := newRegistry(kept...)
	return self, reg, err
}

// allowed applies a tool filter: only Allow (when set), never Deny.
func allowed(f *event.ToolFilter, name string) bool {
	if f == nil {
		return true
	}
	if f.Allow != nil && !slices.Contains(f.Allow, name) {
		return false
	}
	return !slices.Contains(f.Deny, name)
}

// step runs one step. next is true when the turn goes on with another
// step; otherwise stop and err are how the turn ends. A model failure
// leaves the step open (the runtime closes it before turn/end), so the
// turn's error names it.
func (l *loop) step(ctx context.Context, host agent.Host, self *parent.Handle, tools *registry) (next bool, stop agent.StopReason, err error) {
	if err := l.deliverHeld(self); err != nil {
		return false, agent.Error, err
	}
	conversation, err := host.Conversation()
	if err != nil {
		return false, agent.Error, err
	}
	opened, err := host.Step(ctx)
	if err != nil {
		return false, agent.Error, err
	}
	step, ok := opened.(modelStep)
	if !ok {
		return false, agent.Error, errNoTranscript
	}
	header, req := l.request(host.SessionID(), conversation, tools)
	if err := l.logRequest(ctx, step, self, header); err != nil {
		return false, agent.Error, err
	}
	var asm llm.Assembler
	failure, err := l.stream(ctx, step, req, &asm)
	switch {
	case err != nil:
		return false, agent.Error, err
	case ctx.Err() != nil:
		return false, agent.Aborted, step.End(context.WithoutCancel(ctx))
	case failure != nil:
		return l.failed(ctx, step, failure)
	}
	l.retries = 0
	l.warnTruncation(host.SessionID(), asm.Usage())
	return l.respond(ctx, step, tools, &asm)
}

// stream sends req and logs each chunk as it arrives. It returns the
// model's failure (thrown, or an error finish), or an error for anything
// else; a cancelled ctx stops it quietly.
func (l *loop) stream(ctx context.Context, step modelStep, req llm.Request, asm *llm.Assembler) (*llm.Error, error) {
	for chunk, err := range l.a.client.Stream(ctx, req) {
		if ctx.Err() != nil {
			return nil, nil
		}
		if err != nil {
			if f, ok := llm.FailureOf(err); ok {
				return f, nil
			}
			return nil, err
		}
		if err := step.Chunk(ctx, chunk); err != nil {
			return nil, err
		}
		asm.Push(chunk)
	}
	if ctx.Err() != nil {
		return nil, nil
	}
	if finish := asm.Finish(); (finish.Kind == vocab.FinishError || finish.Kind == vocab.FinishAborted) && finish.Failure != nil {
		return &llm.Error{Failure: *finish.Failure}, nil
	}
	return nil, nil
}

// respond logs the assistant message (without tool calls when the
// response was cut at max-tokens), runs its tool calls and ends the step.
func (l *loop) respond(ctx context.Context, step modelStep, tools *registry, asm *llm.Assembler) (bool, agent.StopReason, error) {
	finish := asm.Finish()
	content := asm.Blocks()
	l.lastText = event.TextOf(content)
	if finish.Kind == vocab.FinishMaxTokens {
		content = slices.DeleteFunc(content, func(b event.Block) bool { return b.Type == event.BlockToolCall })
	}
	if _, err := step.MessageWithUsage(ctx, content, asm.Usage()); err != nil {
		return false, agent.Error, err
	}
	var calls []event.ToolCallBlock
	for _, b := range content {
		if call, ok := b.ToolCall(); ok {
			calls = append(calls, call)
		}
	}
	if err := tools.run(ctx, calls, step); err != nil {
		return false, agent.Error, err
	}
	if err := step.End(context.WithoutCancel(ctx)); err != nil {
		return false, agent.Error, err
	}
	switch {
	case ctx.Err() != nil:
		return false, agent.Aborted, nil
	case finish.Kind == vocab.FinishMaxTokens:
		return false, agent.MaxTokens, nil
	}
	return len(calls) > 0, agent.Completed, nil
}

// warnTruncation logs a warning when the prompt reached the context
// window: the server may have cut it (Ollama keeps the end of the prompt
// and drops the start, system prompt and tools included, answering 200).
func (l *loop) warnTruncation(sessionID string, usage *vocab.Usage) {
	window := l.contextWindow()
	if usage == nil || window <= 0 {
		return
	}
	prompt := usage.InputTokens
	if usage.CacheReadTokens != nil {
		prompt += *usage.CacheReadTokens
	}
	if prompt >= window {
		l.a.cfg.Logger.Warn("modelagent: the prompt reached the context window: the server may have truncated it "+
			"(raise the server's context size and --context-window, or shorten the conversation)",
			"session", sessionID, "model", l.model, "promptTokens", prompt, "contextWindow", window)
	}
}

// contextWindow is the client's context window (0: unknown).
func (l *loop) contextWindow() int {
	if d, ok := l.a.client.(llm.Defaulter); ok {
		return d.Defaults().ContextWindow
	}
	return 0
}

// modelStep is a step of the runtime's own host: agent.Step with the
// model's transcript (request header and context, chunks, usage, retries).
type modelStep interface {
	agent.Step
	vocab.Transcript
}

// errNoTranscript fails a model turn on a host whose steps cannot log the
// model's transcript (not the runtime's).
var errNoTranscript = errors.New("modelagent: the host's step cannot log the model transcript (request header, chunks, usage)")

// failed handles a model failure: when the policy retries it, the step
// ends, llm/retry is logged, the delay waited and the turn ends with
// agent.Retry and the failure (aborted when cancelled during the wait: no
// retry, but llm/retry stays); otherwise the failure ends the turn.
func (l *loop) failed(ctx context.Context, step modelStep, failure *llm.Error) (bool, agent.StopReason, error) {
	policy := *l.a.cfg.Retry
	retry, ok := policy.next(failure.Failure, l.retries, l.a.random())
	if !ok {
		return false, agent.Error, failure
	}
	if err := step.End(ctx); err != nil {
		return false, agent.Error, err
	}
	delay := time.Duration(math.Round(retry.DelayMs)) * time.Millisecond
	record := vocab.LLMRetry{Provider: l.provider, Mode: policy.Mode, PolicyKey: policy.key(),
		Retry: retry.Number, DelayMs: retry.DelayMs, Failure: failure.Failure}
	if policy.Mode != RetryAlways {
		record.MaxRetries = &policy.MaxRetries
	}
	if err := step.Retry(ctx, record); err != nil {
		return false, agent.Error, err
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		l.retries = retry.Number
		return false, agent.Retry, failure
	case <-ctx.Done():
		return false, agent.Aborted, nil
	}
}

// system is the system prompt: the persona, else the configured one,
// followed by the task tools' section when they are offered.
func (l *loop) system() string {
	system := cmp.Or(l.opts.Persona, l.a.cfg.System)
	if l.a.tasks != nil {
		system += "\n\n" + tasksGuidance
	}
	return system
}

// request builds the step's request header and model request from the
// conversation. A config field the agent leaves unset and the client
// has a default for is filled in and marked in adapterDefaults.
func (l *loop) request(sessionID string, conversation []agent.Entry, tools *registry) (vocab.Header, llm.Request) {
	header := vocab.Header{
		Config: vocab.Config{Provider: l.provider, Model: l.model, MaxTokens: l.opts.MaxTokens},
		System: l.system(),
		Tools:  tools.specs(),
	}
	if d, ok := l.a.client.(llm.Defaulter); ok {
		defaults := d.Defaults()
		marks := vocab.AdapterDefaults{}
		if header.Config.MaxTokens == 0 && defaults.MaxTokens > 0 {
			header.Config.MaxTokens, marks.MaxTokens = defaults.MaxTokens, true
		}
		if defaults.ReasoningEffort != "" {
			header.Config.ReasoningEffort, marks.ReasoningEffort = defaults.ReasoningEffort, true
		}
		if marks.MaxTokens || marks.ReasoningEffort {
			header.AdapterDefaults = &marks
		}
	}
	req := llm.Request{
		Model: l.model, System: header.System, Messages: messages(conversation), Tools: header.Tools,
		MaxTokens: header.Config.MaxTokens, ReasoningEffort: header.Config.ReasoningEffort, SessionID: sessionID,
	}
	l.withOutputSchema(&header, &req)
	return header, req
}

// messages is the conversation as the model is sent it.
func messages(conversation []agent.Entry) []llm.Message {
	out := make([]llm.Message, 0, len(conversation))
	for _, e := range conversation {
		m := llm.Message{Role: e.Role, Content: e.Content}
		if e.Role == event.RoleTool {
			m.ToolCallID = e.ToolCallID
		}
		out = append(out, m)
	}
	return out
}

// logRequest logs request/header (initial, or resume when the log already
// has one, on this instance's first step; later only on a change) and
// request/context when it changed.
func (l *loop) logRequest(ctx context.Context, step modelStep, self *parent.Handle, header vocab.Header) error {
	if !l.scanned {
		l.scan(self)
	}
	if !l.loggedHere || !sameHeader(header, l.logged) {
		if err := l.logHeader(ctx, step, header); err != nil {
			return err
		}
	}
	rc := vocab.RequestContext{Provider: l.provider, Model: l.model, ContextWindow: l.contextWindow()}
	if l.context != nil && *l.context == rc {
		return nil
	}
	if err := step.RequestContext(ctx, rc); err != nil {
		return err
	}
	l.context = &rc
	return nil
}

// logHeader logs header as request/header unless its JSON is the last
// one logged in this agent's log, and remembers it as logged.
func (l *loop) logHeader(ctx context.Context, step modelStep, header vocab.Header) error {
	encoded, err := json.Marshal(header)
	if err != nil {
		return err
	}
	reason := ""
	switch {
	case !l.loggedHere && l.header != nil:
		reason = vocab.HeaderResume
	case !l.loggedHere:
		reason = vocab.HeaderInitial
	case !bytes.Equal(encoded, l.header):
		reason = vocab.HeaderChange
	}
	if reason != "" {
		if err := step.RequestHeader(ctx, header, reason); err != nil {
			return err
		}
		l.header, l.loggedHere = encoded, true
	}
	l.logged = header
	return nil
}

// sameHeader reports whether a and b are field for field the same, so
// that they encode to the same JSON; it lets a step skip encoding a
// header that did not change (false only costs that encoding).
func sameHeader(a, b vocab.Header) bool {
	sameDefaults := a.AdapterDefaults == b.AdapterDefaults ||
		a.AdapterDefaults != nil && b.AdapterDefaults != nil && *a.AdapterDefaults == *b.AdapterDefaults
	return a.Config == b.Config && sameDefaults && a.System == b.System &&
		slices.EqualFunc(a.Tools, b.Tools, func(x, y vocab.ToolSpec) bool {
			return x.Name == y.Name && x.Description == y.Description && bytes.Equal(x.Parameters, y.Parameters)
		})
}

// scan reads the last request header and context of the agent's log (a
// restarted agent's, or a fork's inherited ones). Events that do not
// decode are passed over.
func (l *loop) scan(self *parent.Handle) {
	l.scanned = true
	if self == nil {
		return
	}
	for _, e := range self.Session().Events() {
		switch e.Type {
		case vocab.TypeRequestHeader:
			if h, err := vocab.DecodeAs[vocab.RequestHeader](e.Type, e.Data); err == nil {
				if encoded, err := json.Marshal(h.Header); err == nil {
					l.header = encoded
				}
			}
		case vocab.TypeRequestContext:
			if rc, err := vocab.DecodeAs[vocab.RequestContext](e.Type, e.Data); err == nil {
				l.context = &rc
			}
		}
	}
}
