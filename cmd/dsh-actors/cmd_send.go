package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/fault"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

const sendUsage = "usage: dsh-actors send [--json] [--store DIR] PARENT_ID CHILD_ID TEXT"

// sendReply is what `send` reports: the accepted follow-up and the epoch
// it woke, with RunEndInfo's stopReason and lastAssistantMessage (the
// blocks; absent when the epoch logged no assistant message, [] for an
// empty one).
type sendReply struct {
	ChildID              string           `json:"childId"`
	MessageID            string           `json:"messageId"`
	StopReason           agent.StopReason `json:"stopReason"`
	LastAssistantMessage *[]event.Block   `json:"lastAssistantMessage,omitempty"`
	// Failure is why the epoch's last turn failed, read from its turn/end
	// (stopReason error only).
	Failure *failureText `json:"failure,omitempty"`
}

// runSend sends TEXT to the continuable child CHILD_ID on behalf of
// PARENT_ID, as the web composer's subagent.prompt does: the parent is
// resumed from its log as a live agent, the subagent Service's Followup
// delivers TEXT (one text block, source {kind:"user"}) and cold-resumes the
// child, whose authority, residency and error codes are the Service's.
// On acceptance it prints "sent MESSAGE_ID to CHILD_ID", waits for the
// child's epoch to end (subagent/end) and prints its stop reason and last
// assistant message, then closes the runtime (child-first drain, flush).
// A child whose turn ends other than completed is still a reply (exit 0);
// a cancellation while waiting drains, flushes and fails with CANCELLED.
func runSend(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("send")
	asJSON := flags.Bool("json", false, "print the result as one JSON object")
	store := storeFlag(flags)
	positional, err := parseInterspersed(flags, args)
	if err == nil {
		err = checkSendArgs(positional)
	}
	if err != nil {
		return usageError(stderr, sendUsage, flags, err)
	}
	parentID, childID, text := positional[0], positional[1], positional[2]
	if !isPostgres(*store) {
		if err := requireStore(*store); err != nil {
			return failure(stderr, "send", err)
		}
	}
	agents, err := modelAgents(nil)
	if err != nil {
		return failure(stderr, "send", err)
	}
	rt, err := openRuntime(*store, dsh.Options{Logger: warnLogger(stderr), ModelAgents: agents}, storeChoice{})
	if err != nil {
		return failure(stderr, "send", err)
	}
	accepted := func(messageID string) {
		if !*asJSON {
			fmt.Fprintf(stdout, "sent %s to %s\n", messageID, childID)
		}
	}
	reply, runErr := sendFollowup(ctx, rt, parentID, childID, text, accepted)
	if ctx.Err() != nil { // interrupted: a second signal forces the exit during the drain
		defer exitOnSecondSignal(stderr, "send")()
	}
	if err := rt.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return failure(stderr, "send", runErr)
	}
	if *asJSON {
		if err := writeJSON(stdout, reply, ""); err != nil {
			return failure(stderr, "send", err)
		}
		return 0
	}
	fmt.Fprintln(stdout, replyLine(reply))
	return 0
}

// replyLine is "CHILD STOP_REASON", then ": TEXT" of the last assistant
// message, and for a failed turn " (failed: MESSAGE (CODE))".
func replyLine(reply sendReply) string {
	line := fmt.Sprintf("%s %s", reply.ChildID, reply.StopReason)
	if reply.LastAssistantMessage != nil {
		line += ": " + textOf(*reply.LastAssistantMessage)
	}
	if f := reply.Failure; f != nil {
		line += " (failed: " + f.why() + ")"
	}
	return line
}

// checkSendArgs names what is wrong with the positional arguments.
func checkSendArgs(positional []string) error {
	names := []string{"PARENT_ID", "CHILD_ID", "TEXT"}
	switch n := len(positional); {
	case n < len(names):
		missing := names[n:]
		list := missing[len(missing)-1]
		if len(missing) > 1 {
			list = strings.Join(missing[:len(missing)-1], ", ") + " and " + list
		}
		return fmt.Errorf("missing %s", list)
	case n > len(names):
		return fmt.Errorf("unexpected argument %q after TEXT (quote TEXT if it has spaces)", positional[len(names)])
	}
	for i, name := range names[:2] {
		if positional[i] == "" {
			return fmt.Errorf("%s must not be empty", name)
		}
	}
	return checkText("TEXT", positional[2])
}

// checkText refuses a message text that is empty or only whitespace, as
// the original's composer sends no draft whose trimmed text is empty.
func checkText(name, text string) error {
	switch {
	case text == "":
		return fmt.Errorf("%s must not be empty", name)
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("%s must not be only whitespace", name)
	}
	return nil
}

// sendFollowup makes parentID a live agent (resumed from its log), sends
// text to childID from it, reports the accepted MessageID to accepted and
// waits until the child's epoch ends. It leaves the runtime open; the
// caller closes it.
func sendFollowup(ctx context.Context, rt *dsh.Runtime, parentID, childID, text string, accepted func(messageID string)) (sendReply, error) {
	p, err := rt.ResumeAgent(ctx, parentID)
	if err != nil {
		return sendReply{}, err
	}
	messageID, err := rt.Send(ctx, p, childID, event.Text(text))
	if err != nil {
		return sendReply{}, withCause(err)
	}
	accepted(messageID)
	end, ok, err := rt.WaitChild(ctx, childID)
	switch {
	case ctx.Err() != nil:
		return sendReply{}, fmt.Errorf("waiting for %s's reply to %s: %w", childID, messageID, ctx.Err())
	case err != nil:
		return sendReply{}, err
	case !ok:
		return sendReply{}, fmt.Errorf("%s's epoch that took %s ended without an outcome here", childID, messageID)
	}
	reply := sendReply{ChildID: childID, MessageID: messageID, StopReason: end.StopReason}
	if end.LastAssistantMessage != nil {
		reply.LastAssistantMessage = &end.LastAssistantMessage
	}
	if end.StopReason == agent.Error {
		reply.Failure = lastTurnFailure(ctx, rt, childID)
	}
	return reply, nil
}

// withCause appends the cause of a subagent error to its message: the
// seed's message alone ("subagent X is unavailable") hides why, say which
// line of the child's log is corrupt. The code stays the Service's.
func withCause(err error) error {
	if e, ok := err.(*fault.Error); ok && e.Cause != nil {
		return fmt.Errorf("%w: %v", err, e.Cause)
	}
	return err
}

// lastTurnFailure is the failure the last turn/end in childID's log holds,
// or nil when the log cannot be read or names none.
func lastTurnFailure(ctx context.Context, rt *dsh.Runtime, childID string) *failureText {
	log, err := rt.History(ctx, childID)
	if err != nil {
		return nil
	}
	for i := len(log.Events) - 1; i >= 0; i-- {
		e := log.Events[i]
		if e.Type != (event.TurnEnd{}).EventType() {
			continue
		}
		p, err := e.Payload()
		if end, ok := p.(event.TurnEnd); err == nil && ok && end.Reason == string(agent.Error) {
			return &failureText{Message: end.Message, Code: end.Code}
		}
		return nil
	}
	return nil
}

// failureText is the message and code of a failed turn.
type failureText struct {
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// why is f in words: its message ("no message" when empty) and its code
// in parentheses when it has one.
func (f *failureText) why() string {
	why := f.Message
	if why == "" {
		why = "no message"
	}
	if f.Code != "" {
		why += " (" + f.Code + ")"
	}
	return why
}
