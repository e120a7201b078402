package llm

import (
	"fmt"
	"net/url"
	"strings"
)

// The server profiles: which extra request fields a server understands.
const (
	// ProfileDeepSeek is DeepSeek's API: thinking and reasoning_effort,
	// no response_format json_schema.
	ProfileDeepSeek = "deepseek"
	// ProfileOpenAI is any other OpenAI-compatible server (Ollama, vLLM,
	// ...): no thinking field, reasoning_effort only when asked for,
	// response_format json_schema, an API key optional.
	ProfileOpenAI = "openai"
)

// The routes logged for each profile's requests and messages.
const (
	DefaultProvider = "deepseek-official"
	OpenAIProvider  = "openai-compatible"
)

// DefaultOpenAI are the OpenAI profile's defaults: none (the server's own
// response cap, no reasoning effort, an unknown context window).
var DefaultOpenAI = Defaults{}

// ProfileFor is the profile a base URL implies when none is named:
// DeepSeek for DeepSeek's hosts, OpenAI for any other.
func ProfileFor(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err == nil && (u.Hostname() == "deepseek.com" || strings.HasSuffix(u.Hostname(), ".deepseek.com")) {
		return ProfileDeepSeek
	}
	return ProfileOpenAI
}

// CheckProfile fails for a profile name other than "", deepseek and openai.
func CheckProfile(profile string) error {
	switch profile {
	case "", ProfileDeepSeek, ProfileOpenAI:
		return nil
	}
	return newError(fmt.Sprintf("llm: unknown API profile %q (want %s or %s)", profile, ProfileDeepSeek, ProfileOpenAI),
		CodeInvalidConfig, nil)
}

// CheckBaseURL fails for a base URL that is not http(s)://host[:port][/path]
// (no query or fragment), naming it.
func CheckBaseURL(baseURL string) error {
	u, err := url.Parse(baseURL)
	switch {
	case err != nil:
		return newError(fmt.Sprintf("llm: base URL %q is not a URL", baseURL), CodeInvalidConfig, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return newError(fmt.Sprintf("llm: base URL %q must start with http:// or https://", baseURL), CodeInvalidConfig, nil)
	case u.Host == "":
		return newError(fmt.Sprintf("llm: base URL %q names no host", baseURL), CodeInvalidConfig, nil)
	case u.RawQuery != "" || u.Fragment != "":
		return newError(fmt.Sprintf("llm: base URL %q must have no query or fragment", baseURL), CodeInvalidConfig, nil)
	}
	return nil
}

// label is how messages name the server of a profile.
func label(profile string) string {
	if profile == ProfileOpenAI {
		return "OpenAI-compatible"
	}
	return "DeepSeek"
}
