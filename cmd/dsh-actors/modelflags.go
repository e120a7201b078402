package main

import (
	"errors"
	"flag"
	"log/slog"
	"strconv"

	"github.com/dsh-actors/dsh-actors/modelagent"
)

// modelFlags are the flags that choose the model agents: --model, --api,
// --base-url and --context-window.
type modelFlags struct {
	model, api, baseURL, mcp string
	contextWindow            int
}

// modelUsage is the model flags' part of a usage line.
const modelUsage = "[--model NAME [--api deepseek|openai] [--base-url URL] [--context-window N] [--mcp FILE]]"

// addModelFlags adds the model flags to flags; their values are read once
// flags is parsed.
func addModelFlags(flags *flag.FlagSet) *modelFlags {
	m := &modelFlags{}
	flags.StringVar(&m.model, "model", "", "model name for an OpenAI-compatible chat-completions server (none: the keyless scripted agent)")
	flags.StringVar(&m.api, "api", "", "the server's API: deepseek (DEEPSEEK_API_KEY) or openai (Ollama, vLLM, ...; OPENAI_API_KEY if any); default: deepseek for DEEPSEEK_BASE_URL or a DeepSeek host, else openai")
	flags.StringVar(&m.baseURL, "base-url", "", "the server's base URL, e.g. http://127.0.0.1:11434/v1 (default: OPENAI_BASE_URL for openai, else DEEPSEEK_BASE_URL, else https://api.deepseek.com)")
	flags.Func("context-window", "the model's context size, `N` tokens, logged; a prompt reaching it logs a truncation warning (default: 1000000 for deepseek, unknown for openai)",
		func(s string) error {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return errors.New("must be a positive number of tokens")
			}
			m.contextWindow = n
			return nil
		})
	flags.StringVar(&m.mcp, "mcp", "", `MCP servers for the model agents: a {"mcpServers": {NAME: {command, args, env} | {url, headers}}} file`)
	return m
}

// agents are the model agents the flags name, with the delegation tools
// (tool name to provider name) after the built-in ones; the startup line (model, API, base URL) and warnings go
// to logger. A bad API or base URL, or a DeepSeek model without a key,
// fails at once. Without --model they are modelAgents: they only rebuild
// stored model agents.
func (m modelFlags) agents(logger *slog.Logger, delegations map[string]string) (*modelagent.Agents, error) {
	if m.model == "" {
		return modelAgents(delegations)
	}
	cfg := modelagent.Config{Model: m.model, API: m.api, BaseURL: m.baseURL, ContextWindow: m.contextWindow, Logger: logger,
		Delegations: delegations}
	if m.mcp != "" {
		servers, err := modelagent.ReadMCPConfig(m.mcp)
		if err != nil {
			return nil, err
		}
		cfg.MCPServers = servers
	}
	return modelagent.New(cfg)
}

// closeAgents stops the agents' MCP servers (nil agents have none); call
// it once the runtime running them is closed.
func closeAgents(agents *modelagent.Agents) {
	if agents != nil {
		_ = agents.Close()
	}
}

// modelAgents are the model agents over the endpoint the environment
// configures, for a command without model flags: they only rebuild stored
// model agents, each with the model its descriptor names, and are nil
// when the endpoint needs a key and none is set (such an agent is then
// NOT_RESUMABLE, naming its route). delegations are as for agents.
func modelAgents(delegations map[string]string) (*modelagent.Agents, error) {
	agents, err := modelagent.New(modelagent.Config{Logger: slog.New(slog.DiscardHandler), Delegations: delegations})
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) && coded.ErrorCode() == "MISSING_CREDENTIAL" {
		return nil, nil
	}
	return agents, err
}
