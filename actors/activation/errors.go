package activation

import "github.com/dsh-actors/dsh-actors/fault"

// inboxClosed names the agent whose inbox refused a message
// (fault.InboxClosed).
func inboxClosed(id string, cause error) error {
	return withCause(fault.InboxClosed, "actors: agent \""+id+"\" inbox is closed", cause)
}

// logFailedRefusal is fault.DurabilityFailed for a message refused because
// the agent's session log failed (cause: the write's error).
func logFailedRefusal(id string, cause error) error {
	return withCause(fault.DurabilityFailed, "actors: agent \""+id+"\" refused a message: its session log failed", cause)
}

// invalidMessage is fault.InvalidMessage: the log could not read the
// message back (a message without a source kind).
func invalidMessage(id, why string) error {
	return fault.New(fault.InvalidMessage, "actors: agent \""+id+"\" refused a message: "+why, nil)
}

// withCause is the actors layer's error: message, then the cause's text
// when there is one.
func withCause(code fault.Code, message string, cause error) error {
	if cause != nil {
		message += ": " + cause.Error()
	}
	return fault.New(code, message, cause)
}
