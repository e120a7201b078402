package pgstore

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// BenchmarkFencedAppendAgainstPlainInsert measures, in one run and
// alternating, a fenced one-event AppendFenced (the seq and the lease
// checked inside the statement that inserts) against a plain one-row
// INSERT of the same line into a table without checks, and reports both
// and their ratio.
func BenchmarkFencedAppendAgainstPlainInsert(b *testing.B) {
	dsn := cluster.Database(b)
	s := openStore(b, dsn)
	require.NoError(b, s.Create(ctx, storetest.Header("bench", ""), nil))
	epoch, err := s.Acquire(ctx, "bench")
	require.NoError(b, err)
	_, err = s.pool.Exec(ctx, `CREATE TABLE plain (session_id text, seq bigint, line text, PRIMARY KEY (session_id, seq))`)
	require.NoError(b, err)
	var fenced, plain time.Duration
	n := int64(0)
	for b.Loop() {
		e := storetest.Note(n, "benchmark line")
		lines, err := session.EventLines("bench", n, []session.Event{e})
		require.NoError(b, err)
		start := time.Now()
		require.NoError(b, s.AppendFenced(ctx, "bench", epoch, []session.Event{e}))
		fenced += time.Since(start)
		start = time.Now()
		_, err = s.pool.Exec(ctx, `INSERT INTO plain (session_id, seq, line) VALUES ($1, $2, $3)`, "bench", n, string(lines[0]))
		require.NoError(b, err)
		plain += time.Since(start)
		n++
	}
	b.ReportMetric(float64(fenced.Nanoseconds())/float64(n), "fenced-ns/append")
	b.ReportMetric(float64(plain.Nanoseconds())/float64(n), "plain-ns/insert")
	b.ReportMetric(float64(fenced)/float64(plain), "fenced/plain")
}

// BenchmarkListChildrenAgainstJSONL lists the children of one parent
// with the Postgres store's one-query ListChildren, through the catalog
// reader over the Postgres store and through it over the JSONL store it
// was imported from, alternating in one run, and reports each and their
// ratios to JSONL (200 sessions, 50 of them the parent's children).
func BenchmarkListChildrenAgainstJSONL(b *testing.B) {
	root := b.TempDir()
	_, err := storegen.Generate(root, storegen.Shape{Sessions: 200, Children: 50, Turns: 2})
	require.NoError(b, err)
	jsonl, err := session.OpenJSONL(root, session.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(b, err)
	b.Cleanup(func() { _ = jsonl.Close() })
	s := openStore(b, cluster.Database(b))
	_, err = s.Import(ctx, jsonl)
	require.NoError(b, err)
	overJSONL, overPostgres := query.New(session.NewSessions(jsonl)), query.New(session.NewSessions(s))
	var sql, pg, js time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		one, err := s.ListChildren(ctx, storegen.Parent)
		require.NoError(b, err)
		sql += time.Since(start)
		start = time.Now()
		got, err := query.ListChildren(ctx, overPostgres, storegen.Parent)
		require.NoError(b, err)
		pg += time.Since(start)
		require.Equal(b, got, one)
		start = time.Now()
		want, err := query.ListChildren(ctx, overJSONL, storegen.Parent)
		require.NoError(b, err)
		js += time.Since(start)
		require.Len(b, got, len(want))
		n++
	}
	b.ReportMetric(float64(sql.Microseconds())/float64(n), "postgres-query-µs/list")
	b.ReportMetric(float64(sql)/float64(js), "postgres-query/jsonl")
	b.ReportMetric(float64(pg.Microseconds())/float64(n), "postgres-µs/list")
	b.ReportMetric(float64(js.Microseconds())/float64(n), "jsonl-µs/list")
	b.ReportMetric(float64(pg)/float64(js), "postgres/jsonl")
}

// BenchmarkDurableAdmissionAgainstInMemory admits one follow-up at a time,
// alternating in one run, three ways: committed to the Postgres inbox
// (the statement that checks the parent's live epoch and the drain
// cut-off), fsynced to a JSONL store's inbox file (its durable admission
// mode), and accepted by the in-memory inbox (JSONL's default admission, which
// a crash can lose), and reports each and the ratios to in-memory.
func BenchmarkDurableAdmissionAgainstInMemory(b *testing.B) {
	pg := openStore(b, cluster.Database(b))
	jsonl, err := session.OpenJSONL(b.TempDir(), session.WithLogger(slog.New(slog.DiscardHandler)), session.WithDurableAdmission())
	require.NoError(b, err)
	b.Cleanup(func() { _ = jsonl.Close() })
	type target struct {
		in    session.DurableInbox
		epoch session.Epoch
	}
	var targets []target
	for _, s := range []session.Fenced{pg, jsonl} {
		require.NoError(b, s.Create(ctx, storetest.Header("p", ""), nil))
		require.NoError(b, s.Create(ctx, storetest.Header("c", "p"), nil))
		epoch, err := s.Acquire(ctx, "p")
		require.NoError(b, err)
		in, ok := session.InboxOf(s)
		require.True(b, ok)
		targets = append(targets, target{in, epoch})
	}
	var memory inbox.Inbox
	memory.Init(nil)
	var spent [3]time.Duration
	n := 0
	for b.Loop() {
		id := inbox.NewMessageID()
		for i, t := range targets {
			m := storetest.Message(id, "p", t.epoch)
			start := time.Now()
			_, err := t.in.Admit(ctx, "c", m)
			spent[i] += time.Since(start)
			require.NoError(b, err)
		}
		msg := event.UserMessage{Role: event.RoleUser, ID: id, Content: []event.Block{}, Source: event.Source{Kind: event.SourceUser}}
		start := time.Now()
		_, err := memory.Post(msg)
		spent[2] += time.Since(start)
		require.NoError(b, err)
		n++
	}
	perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(perOp(spent[0]), "postgres-ns/admit")
	b.ReportMetric(perOp(spent[1]), "jsonl-fsync-ns/admit")
	b.ReportMetric(perOp(spent[2]), "memory-ns/admit")
	b.ReportMetric(float64(spent[0])/float64(spent[2]), "postgres/memory")
	b.ReportMetric(float64(spent[1])/float64(spent[2]), "jsonl/memory")
}

// BenchmarkChildFirstReleaseAgainstPlainRelease measures, in one run and
// alternating, Release (a transaction: the row locked, then the lease
// ended and the session marked disposed unless a child of it is not) of
// a parent with ten disposed children against the one-statement release
// it replaced (owner and lease_until cleared), each after an Acquire
// that is not timed, and reports both and their ratio.
func BenchmarkChildFirstReleaseAgainstPlainRelease(b *testing.B) {
	dsn := cluster.Database(b)
	s := openStore(b, dsn)
	for _, id := range []string{"first", "plain"} {
		require.NoError(b, s.Create(ctx, storetest.Header(id, ""), nil))
		parentEpoch, err := s.Acquire(ctx, id) // held: its children's disposal does not dispose it
		require.NoError(b, err)
		for i := range 10 {
			kid := fmt.Sprintf("%s-kid-%d", id, i)
			require.NoError(b, s.Create(ctx, storetest.Header(kid, id), nil))
			epoch, err := s.Acquire(ctx, kid)
			require.NoError(b, err)
			require.NoError(b, s.Release(ctx, kid, epoch))
		}
		require.NoError(b, s.Release(ctx, id, parentEpoch))
	}
	var childFirst, plain time.Duration
	n := 0
	for b.Loop() {
		epoch, err := s.Acquire(ctx, "first")
		require.NoError(b, err)
		start := time.Now()
		require.NoError(b, s.Release(ctx, "first", epoch))
		childFirst += time.Since(start)
		epoch, err = s.Acquire(ctx, "plain")
		require.NoError(b, err)
		start = time.Now()
		_, err = s.pool.Exec(ctx, `UPDATE sessions SET owner = NULL, lease_until = NULL WHERE id = $1 AND epoch = $2 AND owner = $3`,
			"plain", epoch, s.owner)
		require.NoError(b, err)
		plain += time.Since(start)
		n++
	}
	b.ReportMetric(float64(childFirst.Nanoseconds())/float64(n), "child-first-ns/release")
	b.ReportMetric(float64(plain.Nanoseconds())/float64(n), "plain-ns/release")
	b.ReportMetric(float64(childFirst)/float64(plain), "child-first/plain")
}
