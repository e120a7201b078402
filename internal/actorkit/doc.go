// Package actorkit is the protoactor plumbing the actors packages share and
// keep off their exported surface: the stop-and-report supervisor, the logger factory that routes protoactor's logs into slog,
// Host (what an agent actor is spawned with), and Ref and Mailbox, the
// names under which the actors packages pass an actor's address and an
// inbox's mailbox to one another.
package actorkit
