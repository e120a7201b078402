package modelagent

import (
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/stretchr/testify/require"
)

// TestRetryPolicy checks the policy's key (as llm/retry logs it) and its
// decisions: which failures are retried, as which retry, after what delay.
func TestRetryPolicy(t *testing.T) {
	p := defaultRetryPolicy()
	require.Equal(t, `["normal",2,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],500,10000,0.1]`, p.key())
	always := RetryPolicy{Mode: RetryAlways, InitialDelayMs: 500, MaxDelayMs: 10000, JitterRatio: 0.1}
	require.Equal(t, `["always",500,10000,0.1]`, always.key())

	tests := []struct {
		name     string
		policy   RetryPolicy
		failure  vocab.Failure
		previous int
		random   float64
		want     scheduledRetry
		ok       bool
	}{
		{"first retry, no jitter", p, vocab.Failure{Code: "SERVER"}, 0, 0.5, scheduledRetry{Number: 1, DelayMs: 500}, true},
		{"second retry doubles, low jitter", p, vocab.Failure{Code: "RATE_LIMIT"}, 1, 0, scheduledRetry{Number: 2, DelayMs: 900}, true},
		{"retries exhausted", p, vocab.Failure{Code: "SERVER"}, 2, 0.5, scheduledRetry{}, false},
		{"a code not retried", p, vocab.Failure{Code: "AUTH"}, 0, 0.5, scheduledRetry{}, false},
		{"Retry-After within the maximum", p, vocab.Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: 3000}, 0, 0.5, scheduledRetry{Number: 1, DelayMs: 3000}, true},
		{"Retry-After beyond the maximum", p, vocab.Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: 20000}, 0, 0.5, scheduledRetry{}, false},
		{"always retries anything, capped", always, vocab.Failure{Code: "AUTH", ProviderRetryAfterMs: 20000}, 40, 1, scheduledRetry{Number: 41, DelayMs: 10000}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.policy.next(tt.failure, tt.previous, tt.random)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
		})
	}
}
