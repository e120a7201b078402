// Package host serves the runtime over HTTP: a JSON RPC surface under
// /api (session.* for top-level agents, subagent.* for continuable
// children), Server-Sent Events streams of live frames, and an embedded
// web page (host/web, plain HTML, CSS and ES modules) through which a
// person talks to top-level agents, browses their subagents as a lazily
// expanded tree, reads any child's transcript without waking it, and
// continues a child while its exact parent is live.
//
// The wire protocol — endpoints, the trust fence, carrier statuses,
// envelopes, validation issues, error codes, methods and frames — is
// specified byte for byte in docs/wire-protocol.md in this repository.
//
// New returns a Handler over a *dsh.Runtime (Options.Index, when set,
// answers search, stored titles and the catalog); it maps the runtime's error codes to the wire's (for instance NOT_RESUMABLE to
// subagent-not-resumable, DRAINING and LEASE_HELD to subagent-not-delivered; anything
// unclassified is internal, its cause logged, never sent).
//
// What blocks: a unary call blocks its HTTP request until the backend
// answers or the request's context ends (the answer is then cancelled). A
// prompt answers once the agent's inbox accepted the message, never
// waiting for the turn. Streams never block the runtime: each has a
// bounded queue, and a client that falls behind gets one stream/error
// frame and is disconnected. Handler.Close ends every stream without
// waiting for their handlers; http.Server.Shutdown waits for them.
package host
