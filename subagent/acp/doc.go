// Package acp is the out-of-process subagent provider: each one-shot run
// starts a configured ACP (Agent Client Protocol) agent command as a fresh
// child process, speaks ACP to it over the process's stdin and stdout,
// creates one session, sends the prompt, and collects the text the agent
// streams back as the run's result.
//
// The run is remote: its LocalAgent is nil, its lifecycle events say local
// false, its id is minted in this process (the agent's own session id is
// never exposed), and nothing of it reaches the durable catalog. The
// provider declares no capabilities (an out-of-process agent enforces no
// output schema, depth cap, tool filter or persona of ours) and no
// continuable preparation.
//
// The agent's permission requests are answered by the configured policy:
// Deny (the default) answers cancelled; Allow picks an allow option the
// agent offered, or answers cancelled without one. Client file-system and
// terminal methods are not offered.
//
// The agent works in Config.Dir, else in the parent session's cwd; a run
// with neither fails rather than work in this process's directory.
//
// Disposal ends the process on every path: the run's work is cancelled
// (session/cancel), stdin is closed so the agent can flush and exit, after
// a grace its process group is asked to stop (SIGTERM), and after another
// the whole group is killed; Dispose returns once the
// process is reaped and every goroutine of the run has ended.
package acp
