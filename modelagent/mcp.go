package modelagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-actors/dsh-actors/internal/childenv"
)

// MCPServer is one MCP server the model agents use: a command run over
// stdio (Command, Args, Env) or a streamable HTTP endpoint (URL,
// Headers), as in the common {"mcpServers": {NAME: …}} file.
type MCPServer struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// ReadMCPConfig reads an {"mcpServers": {NAME: {command, args, env} |
// {url, headers}}} file. A server name that is not 1 to 32 letters,
// digits, "_" or "-", a server with neither or both a command and a URL, a
// URL that is not http(s) with a host, or an unreadable file, is an error
// naming it and the file.
func ReadMCPConfig(path string) (map[string]MCPServer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("modelagent: MCP config: %w", err)
	}
	var file struct {
		MCPServers map[string]MCPServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("modelagent: MCP config %s: %w", path, err)
	}
	if err := checkMCPServers(file.MCPServers); err != nil {
		return nil, fmt.Errorf("modelagent: MCP config %s: %w", path, err)
	}
	return file.MCPServers, nil
}

// mcpServerNameRule is the rule every MCP server's name follows, as the
// original's configuration requires: 1 to 32 name characters (isNameChar).
const mcpServerNameRule = `^[A-Za-z0-9_-]{1,32}$`

// isServerName reports whether name follows mcpServerNameRule.
func isServerName(name string) bool {
	if len(name) < 1 || len(name) > 32 {
		return false
	}
	for i := range len(name) {
		if !isNameChar(name[i]) {
			return false
		}
	}
	return true
}

// checkMCPServers refuses, in name order, a server whose name breaks
// mcpServerNameRule, that is not exactly one of a command and a URL, or whose
// URL is not an http(s) URL naming a host.
func checkMCPServers(servers map[string]MCPServer) error {
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		s := servers[name]
		switch {
		case !isServerName(name):
			return fmt.Errorf("MCP server %q: a name must match %s", name, mcpServerNameRule)
		case (s.Command == "") == (s.URL == ""):
			return fmt.Errorf("MCP server %q needs either a command or a url", name)
		case s.URL != "":
			if err := checkMCPURL(s.URL); err != nil {
				return fmt.Errorf("MCP server %q: url %q %w", name, s.URL, err)
			}
		}
	}
	return nil
}

// checkMCPURL says what makes raw no endpoint to connect to.
func checkMCPURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("is not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("must start with http:// or https://")
	case u.Host == "":
		return errors.New("names no host")
	}
	return nil
}

// MCP tool names: the model-facing name's limits, and the hash appended
// when normalising changed a name.
const (
	maxToolName = 64
	hashLength  = 12
)

// mcpToolName is the model-facing name of an MCP server's tool:
// "mcp__<server>__<tool>" when it is made of [A-Za-z0-9_-] and fits in 64
// characters; otherwise each other UTF-16 code unit becomes "_", the name
// is cut to 51 characters and "_" and the first 12 hex digits of the
// SHA-256 of "<server>\x00<tool>" are appended, so that distinct tools
// never share a name.
func mcpToolName(server, tool string) string {
	joined := mcpPrefix + server + "__" + tool
	var b strings.Builder
	for _, unit := range utf16.Encode([]rune(joined)) {
		if unit < 128 && isNameChar(byte(unit)) {
			b.WriteByte(byte(unit))
		} else {
			b.WriteByte('_')
		}
	}
	normalized := b.String()
	if normalized == joined && len(normalized) <= maxToolName {
		return normalized
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	cut := normalized[:min(len(normalized), maxToolName-hashLength-1)]
	return cut + "_" + hex.EncodeToString(sum[:])[:hashLength]
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// mcpCallTimeout bounds one MCP tool call, as the original's client
// bounds it by default: a server that never answers fails the call.
var mcpCallTimeout = 60 * time.Second

// errMCPTimeout is a call that outlived mcpCallTimeout, in the original's
// words (its MCP SDK's RequestTimeout error).
var errMCPTimeout = errors.New("MCP error -32001: Request timed out")

// Reconnection backoff of a server that died: from the first delay,
// doubling, up to the last.
const (
	firstReconnect = 100 * time.Millisecond
	lastReconnect  = 10 * time.Second
)

// mcpHub runs the configured MCP servers for the agents: each server has
// a supervisor goroutine that connects, lists the tools, lists them again
// on tools/list_changed, and reconnects with backoff when the server dies.
type mcpHub struct {
	servers []*mcpLink
	stop    context.CancelFunc
	done    sync.WaitGroup
}

// startMCP starts a supervisor per server; it does not block.
func startMCP(servers map[string]MCPServer, logger *slog.Logger) *mcpHub {
	ctx, stop := context.WithCancel(context.Background())
	hub := &mcpHub{stop: stop}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		link := &mcpLink{name: name, spec: servers[name], logger: logger, changed: make(chan struct{}, 1), ready: make(chan struct{})}
		link.err = errors.New("not connected yet")
		hub.servers = append(hub.servers, link)
		hub.done.Go(func() { link.supervise(ctx) })
	}
	return hub
}

// close stops every supervisor, closes every session (a stdio server's
// process ends) and waits for them all.
func (h *mcpHub) close() {
	if h == nil {
		return
	}
	h.stop()
	h.done.Wait()
}

// tools are every server's tools as last listed, in server then listing
// order. It first waits for each server's first connection attempt to end
// (or for ctx), so that a first turn sees the tools of the servers that
// started. A server one of whose tool names an earlier server's tools
// already have offers none of them, as the original's client refuses a
// registration that clashes, and says so once per listing.
func (h *mcpHub) tools(ctx context.Context) []toolDef {
	if h == nil {
		return nil
	}
	var out []toolDef
	taken := map[string]string{} // tool name -> the server offering it
	for _, s := range h.servers {
		select {
		case <-s.ready:
		case <-ctx.Done():
		}
		defs := s.current()
		if clash := clashing(defs, taken); clash != "" {
			s.reportClash(clash, taken[clash])
			continue
		}
		for _, d := range defs {
			taken[d.Name] = s.name
		}
		out = append(out, defs...)
	}
	return out
}

// clashing is the first of defs' names that taken holds, or "".
func clashing(defs []toolDef, taken map[string]string) string {
	for _, d := range defs {
		if _, ok := taken[d.Name]; ok {
			return d.Name
		}
	}
	return ""
}

// mcpLink is one server's connection, owned by its supervisor; calls
// read the session and tools under mu.
type mcpLink struct {
	name      string
	spec      MCPServer
	logger    *slog.Logger
	changed   chan struct{} // tools/list_changed arrived
	ready     chan struct{} // closed once the first connection attempt ended
	readyOnce sync.Once

	mu      sync.Mutex
	session *mcp.ClientSession // nil while down
	err     error              // why it is down
	defs    []toolDef
	// connects counts the sessions made so far.
	connects int
	// lists counts the tool listings made so far; clashReported is the
	// one whose clash with another server's tools was logged.
	lists, clashReported int
}

// reportClash logs, once per listing, that the server's tool name also
// names owner's tool, so that none of the server's tools are offered.
func (s *mcpLink) reportClash(name, owner string) {
	s.mu.Lock()
	first := s.clashReported != s.lists
	s.clashReported = s.lists
	s.mu.Unlock()
	if first {
		s.logger.Error("modelagent: MCP server's tools clash with another server's; none of them offered",
			"server", s.name, "tool", name, "alsoOfferedBy", owner)
	}
}

// supervise connects and keeps the server connected until ctx is done,
// then closes the session.
func (s *mcpLink) supervise(ctx context.Context) {
	defer s.markReady()
	delay := firstReconnect
	for ctx.Err() == nil {
		session, err := s.connect(ctx)
		if err == nil {
			delay = firstReconnect
			err = s.serve(ctx, session)
		}
		if ctx.Err() != nil {
			return
		}
		s.down(err)
		s.logger.Warn("modelagent: MCP server unavailable, reconnecting", "server", s.name, "err", err, "retryIn", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, lastReconnect)
	}
}

// connect starts the transport and the MCP session.
func (s *mcpLink) connect(ctx context.Context) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "dsh-actors", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case s.changed <- struct{}{}:
			default:
			}
		},
	})
	return client.Connect(ctx, s.transport(), nil)
}

// transport is the server's stdio command or streamable HTTP endpoint.
func (s *mcpLink) transport() mcp.Transport {
	if s.spec.URL != "" {
		return &mcp.StreamableClientTransport{Endpoint: s.spec.URL, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: headerTransport{s.spec.Headers}}}
	}
	cmd := exec.Command(s.spec.Command, s.spec.Args...)
	cmd.Env = childenv.Scrubbed()
	for k, v := range s.spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct{ headers map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// serve lists the tools, then lists them again on every
// tools/list_changed until the session ends (its error) or ctx is done
// (the session is closed).
func (s *mcpLink) serve(ctx context.Context, session *mcp.ClientSession) error {
	ended := make(chan error, 1)
	go func() { ended <- session.Wait() }()
	defer func() {
		_ = session.Close()
		<-ended
	}()
	if err := s.list(ctx, session); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-ended:
			ended <- err // for the deferred wait
			return fmt.Errorf("the session ended: %w", cmpErr(err))
		case <-s.changed:
			if err := s.list(ctx, session); err != nil {
				return err
			}
		}
	}
}

func cmpErr(err error) error {
	if err == nil {
		return errors.New("closed by the server")
	}
	return err
}

// list reads every page of the server's tools and makes them current. A
// list naming one tool twice is the server's error, which a new session
// would repeat: it is refused, logged once naming the server and the tool
// (the original's client refuses it too), and the session stays up with
// the tools it offered before (none before its first good list) until a
// tools/list_changed lists them again. Only a failed tools/list call is
// an error, which ends the session.
func (s *mcpLink) list(ctx context.Context, session *mcp.ClientSession) error {
	defs, twice, err := s.fetch(ctx, session)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.session != session {
		s.connects++
	}
	s.session, s.err = session, nil
	if twice == "" {
		s.defs = defs
	}
	s.lists++
	s.markReady()
	s.mu.Unlock()
	if twice != "" {
		s.logger.Error("modelagent: MCP server listed a tool more than once; its tool list is refused",
			"server", s.name, "tool", twice, "err",
			fmt.Sprintf("mcp-client(%s): server listed tool %q more than once — invalid tool list", s.name, twice))
	}
	return nil
}

// fetch reads every page of the server's tools: their definitions, or
// the raw name of the first tool listed twice ("" when none is).
func (s *mcpLink) fetch(ctx context.Context, session *mcp.ClientSession) (defs []toolDef, twice string, err error) {
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, "", fmt.Errorf("tools/list: %w", err)
		}
		def := s.toolDef(tool)
		if slices.ContainsFunc(defs, func(d toolDef) bool { return d.Name == def.Name }) {
			return nil, tool.Name, nil
		}
		defs = append(defs, def)
	}
	return defs, "", nil
}

// down marks the server unavailable: its tools stay listed and fail
// naming err.
func (s *mcpLink) down(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session, s.err = nil, err
	s.markReady()
}

func (s *mcpLink) markReady() { s.readyOnce.Do(func() { close(s.ready) }) }

func (s *mcpLink) current() []toolDef {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.defs
}

// toolDef is one listed tool: its public name, the server's description
// and input schema (compiled when the validator can; else arguments only
// have to be an object), a Run calling it by its own name.
func (s *mcpLink) toolDef(tool *mcp.Tool) toolDef {
	params, err := json.Marshal(tool.InputSchema)
	if err != nil || tool.InputSchema == nil {
		params = emptyParameters
	}
	def := toolDef{Name: mcpToolName(s.name, tool.Name), Description: tool.Description, Parameters: params}
	if def.schema, err = compileSchema(params); err != nil {
		def.schema, _ = compileSchema(emptyParameters)
	}
	raw := tool.Name
	def.Run = func(ctx context.Context, args toolArgs) (string, error) { return s.call(ctx, raw, args) }
	return def
}

// call runs the tool raw with args, for at most mcpCallTimeout: its text,
// or an error with its text when the server says isError, or the reason
// the server is unavailable or did not answer.
func (s *mcpLink) call(ctx context.Context, raw string, args toolArgs) (string, error) {
	s.mu.Lock()
	session, down := s.session, s.err
	s.mu.Unlock()
	if session == nil {
		return "", fmt.Errorf("MCP server %q is unavailable (reconnecting): %v", s.name, down)
	}
	callCtx, cancel := context.WithTimeoutCause(ctx, mcpCallTimeout, errMCPTimeout)
	defer cancel()
	result, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: raw, Arguments: map[string]any(args)})
	if err != nil && ctx.Err() == nil && context.Cause(callCtx) == errMCPTimeout {
		return "", fmt.Errorf("MCP server %q: %s: %w", s.name, raw, errMCPTimeout)
	}
	if err != nil {
		return "", fmt.Errorf("MCP server %q: %s: %w", s.name, raw, err)
	}
	text := resultText(result, raw)
	if result.IsError {
		return "", errors.New(text)
	}
	return text, nil
}

// resultText is what the model reads of a result: its content blocks'
// text joined by newlines (other kinds of content named in brackets, as
// the original's client names them), the structured content as JSON when
// there is no content, or "(<tool> returned no text content)".
func resultText(result *mcp.CallToolResult, tool string) string {
	var parts []string
	for _, c := range result.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && result.StructuredContent != nil {
		if b, err := json.Marshal(result.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 {
		return "(" + tool + " returned no text content)"
	}
	return strings.Join(parts, "\n")
}

func contentText(c mcp.Content) string {
	switch v := c.(type) {
	case *mcp.TextContent:
		return v.Text
	case *mcp.ImageContent:
		return "[image: " + orUnknown(v.MIMEType) + ", content discarded]"
	case *mcp.AudioContent:
		return "[audio: " + orUnknown(v.MIMEType) + ", content discarded]"
	case *mcp.ResourceLink, *mcp.EmbeddedResource:
		return "[resource: content discarded]"
	}
	return fmt.Sprintf("[unsupported content type: %T]", c)
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown"
	}
	return mime
}
