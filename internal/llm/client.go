package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Client streams model responses.
type Client interface {
	// Stream sends req and yields its chunks in order; it ends after the
	// finish chunk, or with one error (an *Error) after any chunks already
	// yielded. Stopping the range early cancels the call. ctx cancels the
	// call too (the error's code is then ABORTED). Stream never retries.
	Stream(ctx context.Context, req Request) iter.Seq2[vocab.Chunk, error]
}

// Defaults are what a client fills in when a request leaves a field unset;
// the agent loop records them in its request header.
type Defaults struct {
	// MaxTokens is the response cap sent when a request sets none (0: none).
	MaxTokens int
	// ReasoningEffort is sent when a request sets none ("": none).
	ReasoningEffort string
	// ContextWindow is the model's context size in tokens (0: unknown).
	ContextWindow int
}

// Defaulter is implemented by a client that has Defaults.
type Defaulter interface {
	Defaults() Defaults
}

// Profiler is implemented by a client that speaks to a server of a known
// profile (ProfileDeepSeek or ProfileOpenAI).
type Profiler interface {
	Profile() string
}

// Environment variables the DeepSeek endpoint is read from.
const (
	EnvAPIKey  = "DEEPSEEK_API_KEY"
	EnvBaseURL = "DEEPSEEK_BASE_URL"
)

// The DeepSeek client's defaults.
const (
	DefaultBaseURL     = "https://api.deepseek.com"
	defaultIdleTimeout = 300 * time.Second
)

// DefaultDeepSeek are the DeepSeek endpoint's defaults: a 256,000-token
// response cap, high reasoning effort and a 1,000,000-token context.
var DefaultDeepSeek = Defaults{MaxTokens: 256000, ReasoningEffort: EffortHigh, ContextWindow: 1000000}

// Config configures a client.
type Config struct {
	// Profile is ProfileDeepSeek ("" too) or ProfileOpenAI: which extra
	// request fields the server understands.
	Profile string
	// BaseURL is the endpoint; "/chat/completions" is appended.
	BaseURL string
	// APIKey is sent as a bearer token.
	APIKey string
	// HTTPClient sends the requests (default: a client without a timeout;
	// streams are bounded by IdleTimeout instead).
	HTTPClient *http.Client
	// IdleTimeout fails a call (TIMEOUT) when the server sends no chunk for
	// this long (default 300 seconds).
	IdleTimeout time.Duration
	// Defaults fill requests that leave them unset.
	Defaults Defaults
	// UserAgent is the User-Agent header.
	UserAgent string
}

// DeepSeek is the OpenAI-compatible chat-completions client (DeepSeek's
// API, or any other server under ProfileOpenAI).
type DeepSeek struct {
	cfg Config
}

// NewDeepSeek returns a client. It fails with INVALID_CONFIG for an
// unknown profile or a base URL that is not http(s)://host[/path], and
// with MISSING_CREDENTIAL when a DeepSeek configuration has no API key,
// naming the variable that supplies it. It does not block.
func NewDeepSeek(cfg Config) (*DeepSeek, error) {
	if err := CheckProfile(cfg.Profile); err != nil {
		return nil, err
	}
	if cfg.Profile == "" {
		cfg.Profile = ProfileDeepSeek
	}
	if cfg.APIKey == "" && cfg.Profile == ProfileDeepSeek {
		return nil, newError("no DeepSeek API key: set "+EnvAPIKey, CodeMissingCredential, nil)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if err := CheckBaseURL(cfg.BaseURL); err != nil {
		return nil, err
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "dsh-actors (+https://github.com/dsh-actors/dsh-actors)"
	}
	return &DeepSeek{cfg: cfg}, nil
}

// Defaults returns the configured defaults.
func (c *DeepSeek) Defaults() Defaults { return c.cfg.Defaults }

// Profile returns the server's profile.
func (c *DeepSeek) Profile() string { return c.cfg.Profile }

// BaseURL returns the endpoint requests go to (without
// "/chat/completions").
func (c *DeepSeek) BaseURL() string { return c.cfg.BaseURL }

// endpoint is the URL requests are posted to.
func (c *DeepSeek) endpoint() string { return c.cfg.BaseURL + "/chat/completions" }

// errIdle is the cause of a call the idle watchdog cancelled.
var errIdle = errors.New("llm: stream idle")

// Stream sends req to {BaseURL}/chat/completions and yields the translated
// chunks (see Client). The idle timeout runs while Stream waits for the
// server, not while the caller handles a chunk.
func (c *DeepSeek) Stream(ctx context.Context, req Request) iter.Seq2[vocab.Chunk, error] {
	return func(yield func(vocab.Chunk, error) bool) {
		callCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		idle := time.AfterFunc(c.cfg.IdleTimeout, func() { cancel(errIdle) })
		defer idle.Stop()
		err := c.stream(callCtx, c.withDefaults(req), func(chunk vocab.Chunk) bool {
			idle.Stop()
			if !yield(chunk, nil) {
				return false
			}
			idle.Reset(c.cfg.IdleTimeout)
			return true
		})
		if err != nil {
			yield(vocab.Chunk{}, c.classify(ctx, callCtx, err))
		}
	}
}

// withDefaults fills the fields req leaves unset.
func (c *DeepSeek) withDefaults(req Request) Request {
	if req.MaxTokens == 0 {
		req.MaxTokens = c.cfg.Defaults.MaxTokens
	}
	if req.ReasoningEffort == "" {
		req.ReasoningEffort = c.cfg.Defaults.ReasoningEffort
	}
	return req
}

// stream runs one call, handing each chunk to emit until it returns false.
func (c *DeepSeek) stream(ctx context.Context, req Request, emit func(vocab.Chunk) bool) error {
	body, err := marshalRequest(req, c.cfg.Profile)
	if err != nil {
		return err
	}
	resp, err := c.post(ctx, req.SessionID, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := c.responseError(resp); err != nil {
		return err
	}
	start := &bodyStart{r: resp.Body}
	sse := newSSEReader(start)
	if err := translateEvents(sse, emit); err != nil {
		return c.readError(noEventCause(err, sse, start, resp.Header.Get("Content-Type")))
	}
	return nil
}

// bodyStart reads a response body, counting its bytes and keeping its
// start.
type bodyStart struct {
	r    io.Reader
	n    int64
	head []byte
}

// maxHead bounds the start bodyStart keeps: enough for the 120 characters
// an error quotes.
const maxHead = 480

func (b *bodyStart) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if room := maxHead - len(b.head); room > 0 {
		b.head = append(b.head, p[:min(n, room)]...)
	}
	return n, err
}

// noEventCause gives a stream that ended before [DONE] without a single
// event (a JSON completion, an error object, an HTML page) the words of
// what came instead: its size, content type and start. Any other err is
// returned as it is.
func noEventCause(err error, sse *sseReader, start *bodyStart, contentType string) error {
	if !errors.Is(err, errStreamClosed) || sse.events > 0 || start.n == 0 {
		return err
	}
	if contentType == "" {
		contentType = "no content type"
	}
	text := prefix(strings.ToValidUTF8(strings.TrimSpace(string(start.head)), "\uFFFD"), 120)
	return newError(errStreamClosed.Message, CodeStreamClosed,
		fmt.Errorf("the response held no SSE event: %d bytes of %s: %s", start.n, contentType, text))
}

// post sends the request; a failure to send it is TRANSPORT.
func (c *DeepSeek) post(ctx context.Context, sessionID string, body []byte) (*http.Response, error) {
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		return nil, newError(label(c.cfg.Profile)+" API request to "+c.cfg.BaseURL+" failed", CodeTransport, err)
	}
	h := httpReq.Header
	if c.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("User-Agent", c.cfg.UserAgent)
	if sessionID != "" {
		h.Set("X-Deepseek-Harness-Session-Id", sessionID)
	}
	resp, err := c.cfg.HTTPClient.Do(httpReq)
	if err != nil {
		return nil, newError(label(c.cfg.Profile)+" API request to "+c.cfg.BaseURL+" failed", CodeTransport, err)
	}
	return resp, nil
}

// readError is a failed stream: an *Error (STREAM_CLOSED,
// MALFORMED_RESPONSE) as it is, a failed read TRANSPORT.
func (c *DeepSeek) readError(err error) error {
	if _, ok := FailureOf(err); ok {
		return err
	}
	return newError(label(c.cfg.Profile)+" API stream from "+c.cfg.BaseURL+" failed", CodeTransport, err)
}

// classify turns a call's failure into what the caller sees: TIMEOUT when
// the idle watchdog cancelled it, ABORTED when the caller did, else the
// failure itself.
func (c *DeepSeek) classify(ctx, callCtx context.Context, err error) error {
	switch {
	case errors.Is(context.Cause(callCtx), errIdle):
		ms := c.cfg.IdleTimeout.Milliseconds()
		return newError(fmt.Sprintf("%s stream idle timeout after %dms", label(c.cfg.Profile), ms), CodeTimeout, err)
	case ctx.Err() != nil:
		return newError(label(c.cfg.Profile)+" request aborted by caller", CodeAborted, err)
	}
	return err
}

// wireError is a non-2xx response's body.
type wireError struct {
	Error *struct {
		Message any `json:"message"`
		Type    any `json:"type"`
		Code    any `json:"code"`
	} `json:"error"`
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// responseError is nil for a streaming 2xx response; otherwise the failure
// its status, error body and headers describe, caused by an error naming
// the status and the URL.
func (c *DeepSeek) responseError(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusResetContent {
			return newError(label(c.cfg.Profile)+" API returned no response body", CodeEmptyResponse, nil)
		}
		return nil
	}
	message := fmt.Sprintf("%s API error (HTTP %d)", label(c.cfg.Profile), resp.StatusCode)
	var detail []string
	var body wireError
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if json.Unmarshal(raw, &body) == nil && body.Error != nil {
		for _, v := range []any{body.Error.Code, body.Error.Type, body.Error.Message} {
			if s := truthyText(v); s != "" {
				detail = append(detail, s)
			}
		}
		if s, ok := body.Error.Message.(string); ok && s != "" {
			message = s
		}
	}
	e := newError(message, httpErrorCode(resp.StatusCode, strings.Join(detail, " ")), c.statusError(resp.StatusCode))
	e.Status = resp.StatusCode
	e.ProviderRetryAfterMs = retryAfterMs(resp.Header.Get("Retry-After"), time.Now())
	e.RequestID = requestID(resp.Header)
	return e
}

// statusError names a failed response's status and the URL it came from;
// a 404 hints at the usual cause.
func (c *DeepSeek) statusError(status int) error {
	text := fmt.Sprintf("HTTP %d from POST %s", status, c.endpoint())
	if status == http.StatusNotFound && c.cfg.Profile == ProfileOpenAI && !strings.HasSuffix(c.cfg.BaseURL, "/v1") {
		text += " (most OpenAI-compatible servers serve under /v1: is the base URL missing it?)"
	}
	return errors.New(text)
}

// truthyText is v as JavaScript's String would write it, when v is truthy
// (a non-empty string, a non-zero number, true); else "".
func truthyText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		if x != 0 {
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
	case bool:
		if x {
			return "true"
		}
	case map[string]any:
		return "[object Object]"
	}
	return ""
}

var allDigits = regexp.MustCompile(`^\d+$`)

// retryAfterMs reads a Retry-After header: whole seconds, or an HTTP date
// after now; 0 when absent, unreadable or not in the future.
func retryAfterMs(value string, now time.Time) int {
	if value == "" {
		return 0
	}
	if allDigits.MatchString(value) {
		seconds, err := strconv.Atoi(value)
		if err != nil || seconds <= 0 || seconds > math.MaxInt32 {
			return 0
		}
		return seconds * 1000
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0
	}
	return int(max(at.Sub(now).Milliseconds(), 0))
}

// requestID is the server's request id header, if any.
func requestID(h http.Header) string {
	if id := h.Get("X-Request-Id"); id != "" {
		return id
	}
	return h.Get("X-Deepseek-Request-Id")
}

// ReadStream yields the chunks of a chat-completions SSE body, as
// Client.Stream does after the HTTP exchange: it ends after the finish
// chunk, or with one error: STREAM_CLOSED when the body ends before
// [DONE], MALFORMED_RESPONSE for a payload that is not a JSON chunk, or the
// body's read error. Stopping the range early stops reading.
func ReadStream(body io.Reader) iter.Seq2[vocab.Chunk, error] {
	return func(yield func(vocab.Chunk, error) bool) {
		if err := readStream(body, func(c vocab.Chunk) bool { return yield(c, nil) }); err != nil {
			yield(vocab.Chunk{}, err)
		}
	}
}

// readStream translates body's events, handing each chunk to emit until
// it returns false or the stream ends.
func readStream(body io.Reader, emit func(vocab.Chunk) bool) error {
	return translateEvents(newSSEReader(body), emit)
}

// translateEvents translates sse's events, handing each chunk to emit
// until it returns false or the stream ends.
func translateEvents(sse *sseReader, emit func(vocab.Chunk) bool) error {
	tr := &translator{}
	for {
		payload, err := sse.next()
		if err != nil {
			return err
		}
		chunks, done, err := tr.push(payload)
		if err != nil {
			return err
		}
		for _, chunk := range chunks {
			if !emit(chunk) {
				return nil
			}
		}
		if done {
			return nil
		}
	}
}
