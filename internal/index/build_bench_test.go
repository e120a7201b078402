package index

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/cpuclock"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
)

// buildSessions is the size of BenchmarkIndexBuild's store:
// DSH_INDEX_BUILD_SESSIONS, default 100,000.
func buildSessions(b *testing.B) int {
	n, err := strconv.Atoi(os.Getenv("DSH_INDEX_BUILD_SESSIONS"))
	if err != nil || n <= 0 {
		return 100_000
	}
	return n
}

// syntheticLogs are n sessions of one turn each (turn/start, a user
// message, an assistant message, turn/end) in one project folder; every
// tenth after the first is a continuable child of the first.
func syntheticLogs(n int) []session.Log {
	logs := make([]session.Log, n)
	for i := range logs {
		id := fmt.Sprintf("s%06d", i)
		h := session.Header{ID: id, CreatedAt: int64(i + 1), Cwd: "/work"}
		user := session.Event{Type: "user/message", Seq: 1, Time: 1, SurfaceOp: json.RawMessage(`"append"`),
			Data: json.RawMessage(`{"content":[{"type":"text","text":"find the blue lagoon ` + id + `"}],"source":{"kind":"user"},"role":"user","id":"m` + id + `"}`)}
		events := []session.Event{{Type: "turn/start", Seq: 0, Time: 1, Data: json.RawMessage(`{"turn":1}`)}, user}
		if i > 0 && i%10 == 0 {
			h.ParentSession, h.Origin, h.DelegationDepth = "s000000", "subagent", 1
			events = append(events, session.Event{Type: "subagent/descriptor", Seq: 2, Time: 1,
				Data: json.RawMessage(`{"version":1,"provider":"spawn","label":"child ` + id + `"}`)})
		}
		events = append(events, session.Event{Type: "turn/end", Seq: int64(len(events)), Time: 1,
			Data: json.RawMessage(`{"turn":1,"reason":{"kind":"completed"}}`)})
		logs[i] = session.Log{Header: h, Events: events}
	}
	return logs
}

// BenchmarkIndexBuild: building the derived index of a store from
// nothing (Open, then Titles and the first child's parent listing, so
// that every log's header, title, search text and catalog outcome are
// derived) against reading every log of the store once (one Inspect per
// session). The ratio build/read is the cost of indexing over the reads
// it cannot avoid. Each also reports the process's CPU time per
// iteration (cpu-ns/op), whose ratio holds on a busy machine. Run:
//
//	DSH_INDEX_BUILD_SESSIONS=100000 go test -run '^$' -bench IndexBuild -benchtime 1x ./internal/index/
func BenchmarkIndexBuild(b *testing.B) {
	n := buildSessions(b)
	root := b.TempDir()
	logs := syntheticLogs(n)
	if err := storetest.WriteSynthetic(root, logs...); err != nil {
		b.Fatal(err)
	}
	age(b, root)
	store, err := session.OpenJSONL(root)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	ctx := context.Background()
	b.Run("read-every-log", func(b *testing.B) {
		cpu := cpuclock.Process()
		for b.Loop() {
			for _, log := range logs {
				if _, err := store.Inspect(ctx, log.Header.ID); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(cpuclock.Process()-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("build", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(filepath.Join(root, FileName+suffix))
			}
			b.StartTimer()
			cpu -= cpuclock.Process()
			db, err := Open(ctx, root, session.NewSessions(store))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := db.Titles(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := db.ListChildren(ctx, "s000000"); err != nil {
				b.Fatal(err)
			}
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
			cpu += cpuclock.Process()
		}
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	})
}
