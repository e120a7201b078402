package llm

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// The failure codes the client reports. A server's finish reason it does
// not know becomes that reason upper-cased (CONTENT_FILTER, ...) and an
// unexpected HTTP status HTTP_<status>.
const (
	CodeAuth                  = "AUTH"
	CodeQuota                 = "QUOTA"
	CodeRateLimit             = "RATE_LIMIT"
	CodeInvalidRequest        = "INVALID_REQUEST"
	CodeContextWindowExceeded = "CONTEXT_WINDOW_EXCEEDED"
	CodeServer                = "SERVER"
	CodeTimeout               = "TIMEOUT"
	CodeTransport             = "TRANSPORT"
	CodeAborted               = "ABORTED"
	CodeStreamClosed          = "STREAM_CLOSED"
	CodeMalformedResponse     = "MALFORMED_RESPONSE"
	CodeEmptyResponse         = "EMPTY_RESPONSE"
	CodeMissingCredential     = "MISSING_CREDENTIAL"
	CodeUnsupportedEffort     = "UNSUPPORTED_REASONING_EFFORT"
	CodeInvalidConfig         = "INVALID_CONFIG"
)

// Error is a failed model call: the failure facts and the error that
// caused it. errors.Is matches another *Error with the same Code;
// errors.As finds an vocab.Failure in it (the facts, with the message
// replaced by the whole cause chain), so that an agent turn
// failing with it ends {kind:"error", step, failure}.
type Error struct {
	vocab.Failure
	Cause error
}

// Error renders the message and, after ": ", the cause chain (a cause
// whose text repeats the message is not repeated).
func (e *Error) Error() string {
	if e.Cause == nil {
		return e.Message
	}
	cause := e.Cause.Error()
	if cause == "" || cause == e.Message {
		return e.Message
	}
	return e.Message + ": " + cause
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// ErrorCode returns the failure code.
func (e *Error) ErrorCode() string { return e.Code }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// logged is the failure as turn/end records it: the facts, with the
// message replaced by the whole cause chain.
func (e *Error) logged() vocab.Failure {
	f := e.Failure
	f.Message = e.Error()
	return f
}

// As fills an *vocab.Failure target with the failure as turn/end records
// it: the facts, with the message replaced by the whole cause chain.
func (e *Error) As(target any) bool {
	if f, ok := target.(*vocab.Failure); ok {
		*f = e.logged()
		return true
	}
	return false
}

// newError returns an *Error with just a message, code and cause.
func newError(message, code string, cause error) *Error {
	return &Error{Failure: vocab.Failure{Message: message, Code: code}, Cause: cause}
}

// FailureOf returns the failure facts err carries (an *Error anywhere in
// its chain) and whether it carries any.
func FailureOf(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Provider wording for a request that exceeded the model's context window,
// as OpenAI-compatible servers and gateways phrase it.
var contextOverflow = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(?:^|[^a-z0-9])context[\s_-](?:length|window)[\s_-](?:exceed(?:ed|s)?|overflow(?:ed)?|limit[\s_-]exceeded)(?:$|[^a-z0-9])`),
	regexp.MustCompile(`(?i)\b(?:maximum|max)(?:\s+(?:allowed|supported))?\s+context\s+(?:length|window)\b`),
	regexp.MustCompile(`(?i)\b(?:request|prompt|input|messages?)\s+(?:is\s+|are\s+)?too\s+(?:large|long)\s+for\s+(?:(?:this|the)\s+)?(?:model(?:'s)?\s+)?context(?:\s+window)?\b`),
	regexp.MustCompile(`(?i)\b(?:input|prompt|request)\s+(?:is\s+)?too\s+(?:long|large)\s+for\s+(?:this|the)\s+model\b`),
	regexp.MustCompile(`(?i)\b(?:input|prompt|request|messages?)\b.{0,40}\b(?:exceed(?:s|ed)?|overflows?|is\s+larger\s+than)\b.{0,40}\b(?:the\s+)?(?:model(?:'s)?\s+)?context(?:\s+(?:length|window))?\b`),
}

// Provider wording for an exhausted account quota (not a rate limit).
var quotaExceeded = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\binsufficient[\s_-]+(?:quota|balance|credits?)\b`),
	regexp.MustCompile(`(?i)\b(?:quota|usage[\s_-]+limit)[\s_-]+(?:exceeded|exhausted|reached)\b`),
	regexp.MustCompile(`(?i)\bexceed(?:ed|s)?[\s_-]+(?:(?:your|the)[\s_-]+)?(?:current[\s_-]+)?quota\b`),
	regexp.MustCompile(`(?i)\b(?:balance|credits?)[\s_-]+(?:exhausted|depleted)\b`),
	regexp.MustCompile(`(?i)\bout[\s_-]+of[\s_-]+(?:credits?|budget)\b`),
}

func anyMatch(patterns []*regexp.Regexp, detail string) bool {
	for _, p := range patterns {
		if p.MatchString(detail) {
			return true
		}
	}
	return false
}

// httpErrorCode maps a non-2xx status and the server's error detail (its
// code, type and message joined by spaces) to a failure code.
func httpErrorCode(status int, detail string) string {
	switch {
	case status == 401 || status == 403:
		return CodeAuth
	case anyMatch(quotaExceeded, detail):
		return CodeQuota
	case status == 429:
		return CodeRateLimit
	case status == 400 && anyMatch(contextOverflow, detail):
		return CodeContextWindowExceeded
	case status == 400:
		return CodeInvalidRequest
	case status >= 500:
		return CodeServer
	}
	return "HTTP_" + strconv.Itoa(status)
}

// finishReason maps a wire finish_reason to a FinishReason.
func finishReason(reason string) vocab.FinishReason {
	switch reason {
	case "stop":
		return vocab.FinishReason{Kind: vocab.FinishStop}
	case "tool_calls":
		return vocab.FinishReason{Kind: vocab.FinishToolCalls}
	case "length":
		return vocab.FinishReason{Kind: vocab.FinishMaxTokens}
	}
	return vocab.FinishReason{Kind: vocab.FinishError, Failure: &vocab.Failure{
		Message: "model stopped: " + reason,
		Code:    strings.ToUpper(reason),
	}}
}
