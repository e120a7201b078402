package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/dsh-actors/dsh-actors/event"
)

// Scripted returns the keyless scripted agent (see the package doc). It is
// stateless, so one value may serve any number of agents; the Options are
// ignored. Its signature is a Factory.
func Scripted(Options) Agent { return Func(runScript) }

// errNoSubagents fails a scripted spawn or send when the runtime has no
// subagent service.
var errNoSubagents = errors.New("scripted: no subagent service")

// command is one parsed script line: the command word and its argument.
type command struct {
	name string
	arg  string
}

// commandWords are the scripted agent's commands.
var commandWords = map[string]bool{
	"reply": true, "sleep": true, "spawn": true, "fork": true, "send": true, "history": true,
	"fail": true, "panic": true, "refuse": true, "max-tokens": true,
}

// errPlainText reports a message without any command line.
var errPlainText = errors.New("scripted: plain text")

// parseScript splits text into commands. It returns errPlainText when no
// line starts with a command word, and an unknown-command error naming the
// first line of a script whose word is not a command.
func parseScript(text string) ([]command, error) {
	var script []command
	unknown := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, arg := splitWord(line)
		if !commandWords[name] {
			if unknown == "" {
				unknown = name
			}
			continue
		}
		script = append(script, command{name: name, arg: strings.TrimSpace(arg)})
	}
	switch {
	case len(script) == 0:
		return nil, errPlainText
	case unknown != "":
		return nil, fmt.Errorf("scripted: unknown command %q", unknown)
	}
	return script, nil
}

// splitWord splits line at its first white space.
func splitWord(line string) (word, rest string) {
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
		return line[:i], line[i+1:]
	}
	return line, ""
}

// messageText joins the text blocks of msg.
func messageText(msg event.UserMessage) string { return event.TextOf(msg.Content) }

// runScript is the scripted agent's turn.
func runScript(ctx context.Context, host Host, msg event.UserMessage) (StopReason, error) {
	text := messageText(msg)
	script, err := parseScript(text)
	if errors.Is(err, errPlainText) {
		return Completed, host.Say(ctx, event.Text(text))
	}
	if err != nil {
		return Error, err
	}
	for _, c := range script {
		if reason, err := run(ctx, host, c); reason != Completed || err != nil {
			return reason, err
		}
	}
	return Completed, nil
}

// run executes one command; anything but (Completed, nil) ends the turn.
func run(ctx context.Context, host Host, c command) (StopReason, error) {
	switch c.name {
	case "reply":
		return Completed, host.Say(ctx, event.Text(c.arg))
	case "sleep":
		return sleep(ctx, c.arg)
	case "spawn":
		return start(ctx, host, "spawn", c.arg)
	case "fork":
		return start(ctx, host, "fork", c.arg)
	case "history":
		return history(ctx, host)
	case "send":
		return send(ctx, host, c.arg)
	case "fail":
		return Error, errors.New(c.arg)
	case "panic":
		panic("scripted: panic command")
	case "refuse":
		return Refusal, nil
	default: // "max-tokens"
		return MaxTokens, nil
	}
}

// sleep waits for the duration or for ctx, whichever comes first.
func sleep(ctx context.Context, arg string) (StopReason, error) {
	d, err := time.ParseDuration(arg)
	if err != nil {
		return Error, fmt.Errorf("scripted: sleep: %w", err)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return Completed, nil
	case <-ctx.Done():
		return Aborted, nil
	}
}

// splitTarget splits "NAME: TEXT" into its two parts.
func splitTarget(command, arg string) (string, string, error) {
	name, text, ok := strings.Cut(arg, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", "", fmt.Errorf("scripted: %s needs NAME: TEXT, got %q", command, arg)
	}
	return name, strings.TrimSpace(text), nil
}

// start starts a continuable child through spawn or fork and reports its
// id: "spawned LABEL ID" or "forked LABEL ID".
func start(ctx context.Context, host Host, how, arg string) (StopReason, error) {
	label, prompt, err := splitTarget(how, arg)
	if err != nil {
		return Error, err
	}
	subagents := host.Subagents()
	if subagents == nil {
		return Error, errNoSubagents
	}
	begin, done := subagents.Spawn, "spawned "
	if how == "fork" {
		begin, done = subagents.Fork, "forked "
	}
	childID, _, err := begin(ctx, label, prompt)
	if err != nil {
		return Error, err
	}
	return Completed, host.Say(ctx, event.Text(done+label+" "+childID))
}

// historyWidth is how many characters of a message's text a history line
// shows.
const historyWidth = 60

// history replies with the conversation the agent sees, one line per
// message: "ROLE: TEXT", the text with newlines as spaces, cut at
// historyWidth characters.
func history(ctx context.Context, host Host) (StopReason, error) {
	entries, err := host.Conversation()
	if err != nil {
		return Error, err
	}
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.Role + ": " + historyText(e.Content)
	}
	return Completed, host.Say(ctx, event.Text(strings.Join(lines, "\n")))
}

// historyText is the text of content on one line, cut at historyWidth
// characters.
func historyText(content []event.Block) string {
	text := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(event.TextOf(content))
	if runes := []rune(text); len(runes) > historyWidth {
		return string(runes[:historyWidth])
	}
	return text
}

// send delivers a follow-up to a child and reports the accepted message id.
func send(ctx context.Context, host Host, arg string) (StopReason, error) {
	childID, text, err := splitTarget("send", arg)
	if err != nil {
		return Error, err
	}
	subagents := host.Subagents()
	if subagents == nil {
		return Error, errNoSubagents
	}
	messageID, err := subagents.Send(ctx, childID, text)
	if err != nil {
		return Error, err
	}
	return Completed, host.Say(ctx, event.Text("sent "+messageID+" to "+childID))
}
