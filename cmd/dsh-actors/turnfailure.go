package main

import "github.com/dsh-actors/dsh-actors/internal/vocab"

// failureText is the message and code of a failed turn.
type failureText struct {
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// failureOf is a failed turn's message and code, whichever reason shape
// holds them.
func failureOf(r vocab.Reason) failureText {
	return failureText{Message: r.Text(), Code: r.ErrorCode()}
}
