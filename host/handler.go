package host

import (
	"embed"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors"
)

//go:embed web
var webFiles embed.FS

// Options configures a Handler. The zero value is usable.
type Options struct {
	// TrustedHosts are authorities ("host" or "host:port") accepted in the
	// Host header besides loopback ones. Names compare case-insensitively,
	// IP addresses canonically and ports as numbers, :80 counting as no
	// port: an entry with a port (even :80) matches that exact authority, a
	// port-less one (or one ending in a bare colon) the host on any port; an
	// unreadable entry matches nothing.
	TrustedHosts []string
	// Token, when set, is the bearer token a request to /api or /events
	// must carry as "Authorization: Bearer <token>" unless it comes from a
	// loopback peer; a request carrying it is let in whatever its Host (a
	// wrong one is refused, also from loopback). Empty: no token, the
	// Host fence alone.
	Token string
	// CwdRoot, when set, is the folder a cwd requested by session.create
	// must lie in (after cleaning the path and resolving the symbolic
	// links of its existing part); others are refused as bad-request
	// before anything is made. Empty: any absolute cwd.
	CwdRoot string
	// Logger receives internal failures the wire reports only as internal.
	// Nil discards them.
	Logger *slog.Logger
	// Heartbeat is the interval of the SSE keep-alive comment (default 15s).
	Heartbeat time.Duration
	// Cwd is session.create's default cwd, the original's defaults.cwd
	// (default: this process's working directory).
	Cwd string
	// MaxQueuedFrames bounds the frames waiting for one slow event stream
	// before that stream is ended (default 65536).
	MaxQueuedFrames int
	// MaxQueuedBytes bounds the bytes of the frames waiting for one slow
	// event stream before that stream is ended (default 32 MiB); a frame
	// larger than the bound still goes to a stream whose queue is empty.
	MaxQueuedBytes int
	// BodyReadTimeout bounds the time from the start of a request body's
	// read to its end; a body still arriving then is answered 408
	// (default 30s).
	BodyReadTimeout time.Duration
	// MaxBodyBytesInFlight bounds the bytes that all request bodies being
	// read or handled hold together (their buffers; decoding a body holds
	// about two more copies); a body that would go beyond it is answered
	// 413 (default 128 MiB, two bodies of the 64 MiB maximum).
	MaxBodyBytesInFlight int64
}

// Handler serves the RPC methods under /api, the event streams and the
// embedded page. Create it with New and release it with Close.
type Handler struct {
	backend     rpcBackend
	opts        Options
	methods     map[string]method
	hub         *hub
	bodies      *bodyBudget
	catalog     *catalogReads
	unsubscribe func()
	// closeBackend releases a backend the handler opened itself (New's).
	closeBackend func()
	closeOnce    sync.Once
	static       http.Handler
	route        route // host.describe's provider and model
}

// New returns the handler over the runtime rt: its agents and sessions,
// its subagents, its catalog and its search; it starts observing rt's
// live sessions at once (for the event streams) until Close. Close it
// before rt.
func New(rt *dsh.Runtime, opts Options) *Handler {
	backend := newRuntimeBackend(rt)
	h := newHandler(backend, opts)
	h.closeBackend = backend.close
	h.route.provider, h.route.model = rt.Route()
	return h
}

// newHandler subscribes to backend's notices and returns the handler. When backend
// is also an attachmentSource, the sessions live at that moment form the
// first mux baseline (see attachmentSource).
func newHandler(backend rpcBackend, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	opts = withLimitDefaults(opts)
	if opts.Cwd == "" {
		opts.Cwd, _ = os.Getwd()
	}
	page, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic("host: embedded page missing: " + err.Error())
	}
	source, _ := backend.(attachmentSource)
	h := &Handler{backend: backend, opts: opts, hub: newHub(queueLimit{opts.MaxQueuedFrames, opts.MaxQueuedBytes}, source),
		bodies:  &bodyBudget{limit: opts.MaxBodyBytesInFlight},
		catalog: newCatalogReads(backend.ListChildren), static: http.FileServerFS(page)}
	h.methods = map[string]method{
		"host.describe":    h.hostDescribe,
		"session.list":     h.sessionList,
		"session.create":   h.sessionCreate,
		"session.history":  h.sessionHistory,
		"session.prompt":   h.sessionPrompt,
		"session.cancel":   h.sessionCancel,
		"session.search":   h.sessionSearch,
		"subagent.list":    h.subagentList,
		"subagent.history": h.subagentHistory,
		"subagent.prompt":  h.subagentPrompt,
	}
	h.unsubscribe = backend.Subscribe(h.hub.publish)
	h.hub.seedAttached()
	return h
}

// withLimitDefaults fills opts' unset (or negative) limits with their defaults.
func withLimitDefaults(opts Options) Options {
	if opts.MaxQueuedFrames <= 0 {
		opts.MaxQueuedFrames = 1 << 16
	}
	if opts.MaxQueuedBytes <= 0 {
		opts.MaxQueuedBytes = 32 << 20
	}
	if opts.BodyReadTimeout <= 0 {
		opts.BodyReadTimeout = defaultBodyReadTimeout
	}
	if opts.MaxBodyBytesInFlight <= 0 {
		opts.MaxBodyBytesInFlight = defaultBodyBytesInFlight
	}
	return opts
}

// Close unsubscribes from the backend, ends every open event stream and,
// for a handler from New, stops observing the runtime's appends; it does
// not wait for the streams' handlers to return (http.Server.Shutdown does)
// and closes neither the runtime nor Options.Index. Close is idempotent.
func (h *Handler) Close() {
	h.closeOnce.Do(func() {
		h.hub.close()
		h.unsubscribe()
		if h.closeBackend != nil {
			h.closeBackend()
		}
	})
}

// ServeHTTP routes the event streams (GET /api/events.host and
// /api/events.mux, and the page's GET /events, SSE), /api/<method> and
// /api/respond (POST) behind the fence (the bearer token when there is
// one, the browser-trust checks), and everything else to the embedded
// page.
//
// Routing compares the path as sent (EscapedPath), as the original's WHATWG
// pathname keeps percent-encodings: /api/subagent%2Elist names no method.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	name, isAPI := strings.CutPrefix(path, "/api/")
	if !isAPI && path != "/api" && path != pageStreamPath {
		h.servePage(w, r)
		return
	}
	switch admit(r, h.opts.Token, h.opts.TrustedHosts) {
	case forbidden:
		// The original's fence is res.writeHead(403); res.end('forbidden'):
		// no content type (a nil entry stops Go from sniffing one).
		w.Header()["Content-Type"] = nil
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "forbidden")
		return
	case unauthorized:
		w.Header()["Content-Type"] = nil
		w.Header().Set("WWW-Authenticate", `Bearer realm="dsh-actors"`)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "unauthorized")
		return
	}
	if kind, ok := streamPaths[name]; ok && isAPI && r.Method == http.MethodGet {
		h.serveEvents(w, r, kind)
		return
	}
	if path == pageStreamPath && r.Method == http.MethodGet {
		h.serveEvents(w, r, streamAll)
		return
	}
	if !isAPI { // the bare /api names no method, /events answers only GET
		carrierError(w, http.StatusNotFound, "not found")
		return
	}
	h.serveRPC(w, r, name)
}

// servePage serves the embedded files with a strict content policy.
func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		carrierError(w, http.StatusNotFound, "not found")
		return
	}
	header := w.Header()
	header.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	header.Set("X-Content-Type-Options", "nosniff")
	header.Set("Referrer-Policy", "no-referrer")
	header.Set("Cache-Control", "no-cache")
	h.static.ServeHTTP(w, r)
}

func (h *Handler) logFailure(method string, err error) {
	h.opts.Logger.Warn("host: request failed", "method", method, "err", err)
}
