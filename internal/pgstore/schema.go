package pgstore

// schema creates the store's tables when they are missing. Ids compare in
// byte order (COLLATE "C"), so keys and indexes do not depend on the
// database's locale; ListChildren puts siblings in the catalog's order
// (catalog.SiblingOrder) itself.
//
//   - sessions: one row per session, its header line verbatim beside the
//     header fields the queries use, the lease (epoch, owner,
//     lease_until), its state (active, or disposed: released after every
//     child of it was and with nothing pending), the next seq, and the
//     drain that closed admission to it (drain_id; in force while
//     drain_parent holds the lease of drain_epoch).
//   - events: one row per event, its log line verbatim beside its type
//     and time, and the epoch it was written under.
//   - inbox and drains: the durable inbox (a row per accepted message,
//     claimed by the append of its user/message event: claimed_seq is
//     that event's seq, -1 for a message a drain discarded) and the drain
//     cut-offs (a drain is in force while its parent holds the lease of
//     parent_epoch).
const schema = `
CREATE TABLE IF NOT EXISTS sessions (
	id               text COLLATE "C" PRIMARY KEY,
	header_line      text NOT NULL,
	parent_id        text COLLATE "C",
	created_at       bigint NOT NULL,
	origin           text,
	delegation_depth int NOT NULL,
	epoch            bigint NOT NULL DEFAULT 0,
	owner            text,
	lease_until      timestamptz,
	state            text NOT NULL DEFAULT 'active',
	drain_id         uuid,
	next_seq         bigint NOT NULL DEFAULT 0
);
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS drain_parent text COLLATE "C";
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS drain_epoch bigint;
CREATE INDEX IF NOT EXISTS sessions_by_parent ON sessions (parent_id, created_at, id) WHERE state <> 'disposed';
CREATE INDEX IF NOT EXISTS sessions_by_owner ON sessions (owner) WHERE owner IS NOT NULL;
CREATE TABLE IF NOT EXISTS events (
	session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
	seq        bigint NOT NULL,
	epoch      bigint NOT NULL,
	type       text NOT NULL,
	time       bigint NOT NULL,
	line       text NOT NULL,
	PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS inbox (
	session_id    text COLLATE "C" NOT NULL REFERENCES sessions (id),
	msg_id        text COLLATE "C" NOT NULL,
	inbox_seq     bigserial,
	from_session  text COLLATE "C",
	from_epoch    bigint,
	body          jsonb NOT NULL,
	accepted_at   timestamptz NOT NULL DEFAULT now(),
	claimed_epoch bigint,
	claimed_seq   bigint,
	PRIMARY KEY (session_id, msg_id)
);
CREATE INDEX IF NOT EXISTS inbox_pending ON inbox (session_id, inbox_seq) WHERE claimed_seq IS NULL;
CREATE TABLE IF NOT EXISTS drains (
	drain_id     uuid PRIMARY KEY,
	parent_id    text COLLATE "C" NOT NULL,
	parent_epoch bigint NOT NULL,
	opened_at    timestamptz NOT NULL DEFAULT now()
);
`
