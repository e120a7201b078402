// Package actorkit is the protoactor plumbing the actors packages share and
// keep off their exported surface: the dispatcher Pool, the stop-and-report
// supervisor, the logger factory that routes protoactor's logs into slog,
// Host (what an agent actor is spawned with), and the accessors through
// which siblings reach the protoactor values a public type holds
// unexported.
package actorkit
