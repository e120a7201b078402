package modelagent

import (
	"cmp"
	"log/slog"
	"os"
	"strings"

	"github.com/dsh-actors/dsh-actors/internal/llm"
)

// Environment variables an OpenAI-compatible server's endpoint is read
// from (DeepSeek's are DEEPSEEK_BASE_URL and DEEPSEEK_API_KEY).
const (
	envOpenAIBaseURL = "OPENAI_BASE_URL"
	envOpenAIKey     = "OPENAI_API_KEY"
)

// endpoint resolves cfg's server: the base URL (cfg's, else
// $OPENAI_BASE_URL for the openai API, else $DEEPSEEK_BASE_URL, else
// DeepSeek's), the profile (cfg.API, else deepseek for DeepSeek's
// variable or host, else openai) and the key (cfg's, else the profile's
// variable: a DeepSeek key is never sent to another server). It fails for
// an unknown profile; NewDeepSeek checks the rest.
func endpoint(cfg Config) (llm.Config, error) {
	if err := llm.CheckProfile(cfg.API); err != nil {
		return llm.Config{}, err
	}
	base, implied := strings.TrimSpace(cfg.BaseURL), ""
	if base == "" && cfg.API == llm.ProfileOpenAI {
		base = strings.TrimSpace(os.Getenv(envOpenAIBaseURL))
	}
	if base == "" {
		base, implied = cmp.Or(strings.TrimSpace(os.Getenv(llm.EnvBaseURL)), llm.DefaultBaseURL), llm.ProfileDeepSeek
	}
	profile := cmp.Or(cfg.API, implied, llm.ProfileFor(base))
	out := llm.Config{Profile: profile, BaseURL: base, APIKey: cfg.APIKey, IdleTimeout: cfg.IdleTimeout}
	switch profile {
	case llm.ProfileDeepSeek:
		out.APIKey = cmp.Or(out.APIKey, os.Getenv(llm.EnvAPIKey))
		out.Defaults = llm.DefaultDeepSeek
	default:
		out.APIKey = cmp.Or(out.APIKey, os.Getenv(envOpenAIKey))
		out.Defaults = llm.DefaultOpenAI
	}
	if cfg.ContextWindow > 0 {
		out.Defaults.ContextWindow = cfg.ContextWindow
	}
	return out, nil
}

// defaultProvider is the route logged for a profile's requests.
func defaultProvider(profile string) string {
	if profile == llm.ProfileOpenAI {
		return llm.OpenAIProvider
	}
	return llm.DefaultProvider
}

// announce logs, once at New, what the agents will talk to.
func announce(logger *slog.Logger, cfg Config, client *llm.DeepSeek) {
	logger.Info("model agents", "model", cfg.Model, "api", client.Profile(), "baseURL", client.BaseURL(),
		"provider", cfg.Provider, "contextWindow", client.Defaults().ContextWindow)
}
