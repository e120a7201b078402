// Package host is the web product path of seed 004: an http.Handler that
// serves a small RPC surface, a Server-Sent Events stream of live frames and
// an embedded page (host/web, plain HTML/CSS/JS, no build step) through which
// a person talks to top-level agents, browses their continuable subagents as
// a lazily expanded tree, reads any child's transcript without waking it, and
// continues a child only while its exact parent is live.
//
// The handler knows the runtime only through the Backend interface defined
// here; NewRuntimeBackend adapts subagent.Service, actors.Runtime and
// query.Query to it.
//
// # Carrier
//
// Unary calls are POST /api/<method> with Content-Type application/json and
// a client-request envelope:
//
//	{"type":"client-request","rpcId":"<any string>","method":"<method>","payload":{...}}
//
// answered with HTTP 200 and a server-response echoing rpcId:
//
//	{"type":"server-response","rpcId":"…","result":{"ok":true,"value":{...}}}
//	{"type":"server-response","rpcId":"…","result":{"ok":false,"error":{"code":"…","message":"…","details":{...}}}}
//
// HTTP statuses describe only the carrier: 404 "not found" (unknown path, or
// a non-POST other than the two stream GETs: /api/events.host and
// /api/events.mux), 415 "content type must be application/json", 400 "body
// is not JSON", 413 "request body too large" (a body over 64 MiB; the
// original reads bodies with no limit, so the cap only guards memory and
// realistic payloads such as padded envelopes or base64 images are answered
// normally; also a body that does not fit beside the bodies in flight,
// Options.MaxBodyBytesInFlight, with a text naming that budget), 408
// "request body not read within <timeout>" (a body still arriving after
// Options.BodyReadTimeout, 30s by default), 500 "handler failure: <text>"
// (a panic), 403 "forbidden" (the trust fence). Behind the fence they are checked in the original's order: a
// non-POST or a path outside /api/ is 404, then the media type (415), then
// the body (413, 408, 400), and only then an unknown method name (404). The body
// is read as the original's req.json(): up to two leading UTF-8 BOMs are
// dropped (undici strips one, its TextDecoder another) before JSON parsing.
// Paths are compared as sent, as the original's WHATWG pathname keeps
// percent-encodings: /api/subagent%2Elist and /api/events%2Emux are 404.
// Headers are the original's: a 200 has only Content-Type application/json
// (Response.json), a carrier failure only text/plain;charset=UTF-8
// (new Response(text)), the 403 none (res.writeHead(403)), and a stream
// text/event-stream with Cache-Control no-cache.
// Validation has two levels, both answered as bad-request with
// details.issues: the envelope ("invalid client-request message", rpcId
// "invalid-request" when the body's rpcId is not a string; `method "<m>"
// does not match path "<p>"`), then the payload ("invalid payload for
// <method>"). Unknown payload keys are ignored. details.issues are the
// issues zod 4 reports for the original's schemas, keys in zod's order
// (Issue), e.g. {"expected":"string","code":"invalid_type",
// "path":["parentSessionId"],"message":"Invalid input: expected string,
// received undefined"}; ids are z.string().min(1), beforeSeq
// z.number().int().nonnegative(), maxMessages z.number().int().positive().
// Keys inside details keep the original's order: sessionId,
// parentSessionId, childSessionId, reason. JSON is written without HTML
// escaping, as JSON.stringify writes it. An id inside a message is put
// between plain double quotes with nothing escaped, as the original's JS
// templates write it (`parent session "a"b" is not live`).
//
// POST /api/respond carries a client-response to a server-initiated
// request (the original's approvals and questions). Behind the fence it
// goes through the same carrier checks as a method — a non-POST is 404,
// then the media type 415, then the body 413/408/400 — and is answered before
// the method lookup, always HTTP 200 with Content-Type application/json.
// This runtime never issues server-initiated requests, so nothing is ever
// pending: a body the original's clientResponseSchema accepts
// ({type:"client-response", rpcId: string, result: {ok:true, value} with
// value present (any JSON), or {ok:false, error:{code, message: string,
// details}} with code one of the error codes and details of that code's
// shape; unknown keys ignored) is {"accepted":false,"reason":"not-pending"},
// anything else {"accepted":false,"reason":"bad-response"}. Only the exact
// path /api/respond is the route (/api/%72espond and /api/respond/ are 404).
//
// The browser-trust fence guards /api and /events. The Host header must be
// exactly an authority (no userinfo, path or escapes) whose host is
// loopback (localhost, 127.0.0.0/8, [::1]) or matches an
// Options.TrustedHosts entry; Sec-Fetch-Site "cross-site" is refused; an
// Origin header, when present, must be one http(s)/ws(s) origin whose host
// and port equal the Host's (a scheme's default port counts as absent;
// "null" and "" are refused). A refusal is 403 "forbidden" with no
// Content-Type.
//
// # Methods
//
// session.list {cursor?} → {items: [Summary]}, the original's
// SessionSummary rows in its key order: {sessionId, updatedAt, running,
// blank, parentSessionId?, cwd?, projections?}, newest activity first
// (updatedAt descending: Unix ms of a live session's last event other than
// a session/end-seed, a stored session's log file mtime in fractional ms as
// Node's mtimeMs, else createdAt; ties keep the original's order: live
// sessions as they became live, then stored ones in folder order). Every
// session, live or
// stored; cursor (a string when present) is the original's reserved seat and
// is ignored. An attached (live) session is blank while it has no
// turn/start and carries projections {asOfSeq, values: {title}}: asOfSeq is
// its last event's seq (-1 for none) and title, this runtime's only
// projection, is the first line of its first user message (the runtime
// writes no session/title events), or null before one. A stored session
// that is not live is never blank and has no projections, as the
// original's cold rows without a projection-cache row. Whether a row is a
// continuable child is not in the row (the original's has no origin):
// parentSessionId is, and host/session-added frames are the original's
// {type, sessionId, blank, parentSessionId?, cwd?}, without origin either;
// the page tells a child by its parentSessionId.
//
// session.create {workspaceId?, cwd?, sessionId?} → {sessionId} of a new
// live top-level agent session. The payload is the original's (ids
// non-empty strings, cwd a string; workspaceId and cwd together are zod's
// custom issue "session.create accepts workspaceId or cwd, not both").
// This runtime has no workspaces: a workspaceId is workspace-not-found
// `workspace "<id>" not found` {workspaceId}. As the original's
// ensureSession, the id is the requested sessionId or a minted
// session-<uuid>, and cwd the requested cwd or Options.Cwd (the serve
// process's working directory, the original's defaults.cwd). A subagent
// session under the id (origin "subagent", a descriptor in its own suffix,
// or a live child of a live parent), live or stored, is never adopted: it
// is agent-busy `session "<id>" is owned by subagent routing` {reason: "use
// subagent delivery for this child session"}, checked before the cwd. Else
// a live session under the id is returned when its cwd is cwd (the original
// checks the cwd of whatever agent it ends up with); a requested id that is
// stored is resumed when its header's cwd is cwd, else session-conflict `session
// "<id>" already exists with cwd <JSON.stringify(existing)>; requested
// <JSON.stringify(cwd)>` {sessionId, requestedCwd, existingCwd?} (a stored
// session without a cwd reads "undefined" and has no existingCwd);
// otherwise cwd is made (mkdir -p) and a new session is created under the
// id with that cwd in its header, so its session.list row and
// host/session-added frame carry cwd.
//
// session.history {sessionId, beforeSeq?, maxMessages?} → {events, hasMore,
// projections?} like subagent.history, for any session, never activating
// it (the seed-era original resumed a stored session to read it, appending
// an end-seed and publishing it; its later versions read without waking,
// as here, and a read should not write); the tail page (no beforeSeq) also carries projections {asOfSeq: the
// last event's seq (-1 for none), values: {title}}, as a session.list row
// does. Errors:
// session-not-found `session "<id>" not found` {sessionId}, cancelled,
// internal.
//
// session.prompt {sessionId, mode: "queue"|"steer", content} → {accepted:
// true}: delivers to a top-level agent (resuming it from storage when it is
// not live) with source {kind:"user", rpcId}, answering once its inbox
// accepted the message. mode is required (anything else, null or absent, is
// zod's invalid_union issue with one invalid_value per literal). This
// runtime never steers a running turn: "steer" is delivered exactly like
// "queue", as a follow-up that runs as its own FIFO turn after the current
// one. A subagent session (as for session.create) is refused with agent-busy `session "<id>" is
// owned by subagent routing` {reason: "use subagent delivery for this child
// session"}; an unknown id is session-not-found.
//
// subagent.list {parentSessionId} → {entries, parentAvailable}: the complete
// direct catalog in service order. Healthy rows are exactly {kind:"child",
// id, label, activity:"running"|"inactive"} (seed 004: no mode; label always
// present, possibly ""; running: the child session is live), diagnostics
// {kind:"diagnostic", id, reason:"corrupt"|"unsupported"|"unavailable"}.
// parentAvailable says whether the exact parent agent is live now (a hint;
// subagent.prompt decides).
// Errors: cancelled "subagent catalog read was cancelled", internal
// "subagent catalog read failed" (an unknown parent too). Catalog reads
// (here and in the address checks below) are coalesced per parent: a
// request joins the next read that starts after it arrived, never one
// already running, so answers are never older than the request while a
// thousand-child catalog is read once for all concurrent callers.
//
// subagent.history {parentSessionId, childSessionId, beforeSeq?,
// maxMessages?} → {events: [{event}], hasMore}. The address is seed 004's
// {parentSessionId, childSessionId}: it has no mode, and a "mode" key is
// ignored like any unknown key. The address is verified in the parent's
// catalog first: a parent the catalog does not know is subagent-not-found
// `parent session "<p>" is unavailable` {parentSessionId, childSessionId};
// a child that is no direct entry is subagent-not-found `session "<c>" is
// not a continuable direct child of "<p>"` {parentSessionId,
// childSessionId}; a diagnostic entry is subagent-catalog-diagnostic
// `subagent "<c>" is <reason>` {parentSessionId, childSessionId, reason}.
// Then the child's transcript is read from memory or storage without
// acquiring, publishing or resuming any agent; a transcript naming another
// parent is subagent-unauthorized "subagent parent changed during history
// read". Pages are message-aligned: the counting unit is a user, assistant
// or steering message with surfaceOp "append"; the page starts at the group
// (sourceEventSeqs) of the maxMessages-th message from the end of the window
// (events before beforeSeq), default 50; maxMessages 0 and a null
// maxMessages or beforeSeq are bad-requests (an optional number is absent
// only when its key is); hasMore says the page does not start at seq 0.
//
// subagent.prompt {parentSessionId, childSessionId, content} → {messageId}
// ("mode" ignored as for history). The exact parent must be live
// (subagent-parent-unavailable `parent session "<p>" is not live`, checked
// before any catalog read, never resuming the parent); the address is
// verified as for history; then the continuation service delivers content
// with source {kind:"user", rpcId}. Failures: cancelled, subagent-not-resumable
// "subagent cannot be resumed", subagent-unauthorized "subagent does not
// belong to this parent", subagent-not-delivered "message was not delivered"
// {childSessionId} (draining, activation closing), internal "subagent prompt
// failed" (anything else, continuation or persistence unavailable included).
//
// content (session.prompt and subagent.prompt) is seed 004's ContentBlock[]:
// an array, possibly empty, of objects each with a string "type"; other keys
// are allowed and kept. Each block is logged in the user/message as the
// original's z.looseObject parse writes it: "type" first, then its other
// keys in JavaScript's order (integer-like keys first), values as
// JSON.stringify writes them ({"data":"x","type":"image"} is logged
// {"type":"image","data":"x"}). An empty array is logged as "content":[].
//
// # Frames
//
// GET /api/events.host (host/* frames), GET /api/events.mux (session/*
// frames) and GET /events (both, in one order: the page's own stream,
// outside the original's /api routes) are SSE streams:
// ": connected", then one "data: <server-request>" block per frame, where
// the envelope is {"type":"server-request","rpcId":"<fresh uuid>",
// "method":<frame type>,"payload":<frame>}. Frames, in the runtime's order:
//
//	host/session-added   {sessionId, blank, parentSessionId?, cwd?}
//	host/session-status  {sessionId, running}
//	host/session-removed {sessionId}
//	host/agent-error     {sessionId, message}  a turn ended in error
//	session/subscribed   {sessionId, lastSeq}  mux only: one per attached session on open, then one per newly attached session
//	session/event        {sessionId, event}  every event appended to a live session
//	session/queue        {sessionId, items: [{id, message}]}  a live agent's queued messages, after each acceptance, claim or discard; mux: also one per non-empty queue on open (queue.go)
//
// blank is true while the session has no turn/start event (the original's
// sessionBlank), so a newly published subagent child is blank.
//
// host/agent-error is derived from a live session's turn/end whose reason is
// {kind:"error", step, message, code?} (an error or a panic in the turn):
// message is the reason's message, the error chain the original renders
// with errorChain. It is queued just before that turn/end's session/event
// and so before the idle host/session-status, as the original's loop emits
// agent/error from settle() before appending turn/end. It goes to
// /api/events.host and /events, not to the mux; the page ignores it.
//
// session/subscribed comes from the backend's optional AttachmentSource
// (RuntimeBackend implements it): the handler asks it once when created and
// at each host/session-added, then follows lastSeq (the seq of the
// session's last event, -1 for none) from the session/event notices, so a
// new mux stream opens with the attached sessions in the order they became
// attached, and a session attached later is subscribed before any of its
// events. A cold child resumed by a follow-up is subscribed again with its
// stored log and end-seed as the baseline. A Backend that is not an
// AttachmentSource gets no session/subscribed frames.
//
// A ": ping" comment keeps idle streams open. A stream whose client cannot
// keep up receives one stream/error frame and ends; clients reconnect and
// re-pull what they show (events are merged by seq; a seq gap re-pulls the
// tail page). A cold resume appends session/end-seed before the session is
// published, so a resumed child's first frame always follows such a gap.
//
// # Page
//
// GET / serves host/web (index.html, style.css and ES modules): the
// sessions sidebar (the session.list rows without a parentSessionId,
// newest activity first, titled from projections.values.title; children are
// reached through the tree only), the conversation (session.* for a
// top-level session; subagent.* only, by {parentSessionId, childSessionId},
// for a child opened from the tree), the header action "N subagents" with
// its lazily expanded ARIA tree, and the live frames (status flips in place;
// membership changes refetch one catalog after a 50 ms debounce; reconnect
// with jittered exponential backoff). Strings are Chinese (the seed's copy)
// or English from navigator.language; ?lang=zh or ?lang=en forces one. The
// selection is kept in localStorage "dsh.sessions.current".
//
// # Runtime backend
//
// NewRuntimeBackend implements Backend over actors.Runtime (StartAgent,
// ResumeAgent, the registry's exact Get, the agent event bus for status
// edges), session.Sessions (Added/Removed/Appended changes),
// query.Query.ReadSession (a live snapshot or one non-mutating
// Store.Inspect) and the subagent service (ListChildren, Followup). It maps
// subagent codes: NOT_RESUMABLE → subagent-not-resumable, UNAUTHORIZED →
// subagent-unauthorized, DRAINING and ACTIVATION_CLOSING →
// subagent-not-delivered, CANCELLED → cancelled;
// SESSION_QUERY_SESSION_NOT_FOUND → session-not-found; anything else
// (CONTINUATION_UNAVAILABLE and PERSISTENCE_UNAVAILABLE included) is
// unclassified and answered as internal.
package host
