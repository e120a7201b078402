package modelagent

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// The modes of a RetryPolicy.
const (
	RetryNormal = "normal"
	RetryAlways = "always"
)

// RetryPolicy decides whether a failed model call is tried again. Normal
// mode (RetryNormal) retries the RetryableCodes (failure codes such as
// RATE_LIMIT, SERVER, TIMEOUT) up to MaxRetries times; always mode
// (RetryAlways) retries every failure without a bound. Delays grow from
// InitialDelayMs, doubling per retry up to MaxDelayMs, with a symmetric
// random jitter of JitterRatio; a server's Retry-After within MaxDelayMs is
// used as it is. The loop logs each retry it schedules as an llm/retry
// event before it waits.
type RetryPolicy struct {
	Mode           string
	MaxRetries     int
	RetryableCodes []string
	InitialDelayMs float64
	MaxDelayMs     float64
	JitterRatio    float64
}

// defaultRetryPolicy is the normal policy: two retries of EMPTY_RESPONSE,
// RATE_LIMIT, SERVER, TIMEOUT and TRANSPORT, from 500 ms up to 10 s, with
// 10% jitter.
func defaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		Mode:           RetryNormal,
		MaxRetries:     2,
		RetryableCodes: []string{llm.CodeEmptyResponse, llm.CodeRateLimit, llm.CodeServer, llm.CodeTimeout, llm.CodeTransport},
		InitialDelayMs: 500,
		MaxDelayMs:     10000,
		JitterRatio:    0.1,
	}
}

// key identifies the policy in llm/retry events, so that a retry chain is
// counted against the policy that scheduled it: the JSON array
// ["normal", maxRetries, sortedCodes, initial, max, jitter], or
// ["always", initial, max, jitter].
func (p RetryPolicy) key() string {
	var parts []any
	if p.Mode == RetryAlways {
		parts = []any{p.Mode, p.InitialDelayMs, p.MaxDelayMs, p.JitterRatio}
	} else {
		codes := slices.Clone(p.RetryableCodes)
		slices.Sort(codes)
		if codes == nil {
			codes = []string{}
		}
		parts = []any{p.Mode, p.MaxRetries, codes, p.InitialDelayMs, p.MaxDelayMs, p.JitterRatio}
	}
	key, _ := json.Marshal(parts) // strings and numbers: cannot fail
	return string(key)
}

// scheduledRetry is one retry: its number in the chain (from 1) and how
// long to wait before it.
type scheduledRetry struct {
	Number  int
	DelayMs float64
}

// next decides the retry after failure f, given the number of the last
// retry of this chain (0 for none) and a random sample in [0, 1] for the
// jitter. It reports false when the failure is not retried: a code the
// policy does not retry, MaxRetries reached, or (in normal mode) a
// Retry-After longer than MaxDelayMs.
func (p RetryPolicy) next(f vocab.Failure, previous int, random float64) (scheduledRetry, bool) {
	if p.Mode != RetryAlways && (!slices.Contains(p.RetryableCodes, f.Code) || previous >= p.MaxRetries) {
		return scheduledRetry{}, false
	}
	r := scheduledRetry{Number: previous + 1}
	switch after := float64(f.ProviderRetryAfterMs); {
	case after > 0 && after <= p.MaxDelayMs:
		r.DelayMs = after
	case after > p.MaxDelayMs && p.Mode != RetryAlways:
		return scheduledRetry{}, false
	default:
		r.DelayMs = p.backoff(r.Number, random)
	}
	return r, true
}

// backoff is the local delay of retry n.
func (p RetryPolicy) backoff(n int, random float64) float64 {
	exponential := math.Min(p.InitialDelayMs*math.Pow(2, float64(min(n-1, 1024))), p.MaxDelayMs)
	jitter := 1 - p.JitterRatio + 2*p.JitterRatio*random
	return math.Min(exponential*jitter, p.MaxDelayMs)
}
