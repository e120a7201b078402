package session_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/storetest"
	"github.com/dsh-actors/dsh-actors/session"
)

// The benchmarks over stores written by storetest.WriteSynthetic (an
// external test package: sessiontest imports session).

// BenchmarkInspect reads a ~10 MB log; the MB/s column is the throughput.
func BenchmarkInspect(b *testing.B) {
	root := b.TempDir()
	const events = 50_000
	log := session.Log{Header: session.Header{ID: "big", CreatedAt: 1789000001000, Cwd: "/work/project"}, Events: make([]session.Event, events)}
	for i := range log.Events {
		log.Events[i] = session.Event{Type: "assistant/chunk", Seq: int64(i), Time: 1785544945198 + int64(i), Data: session.BenchData}
	}
	require.NoError(b, storetest.WriteSynthetic(root, log))
	s, err := session.OpenJSONL(root)
	require.NoError(b, err)
	defer s.Close()
	path, err := logpath.Path(root, log.Header.Cwd, log.Header.ID)
	require.NoError(b, err)
	info, err := sessionfs.OSFS{}.Stat(path)
	require.NoError(b, err)
	b.SetBytes(info.Size())
	b.ReportMetric(float64(info.Size())/1e6, "log-MB")
	b.ResetTimer()
	for range b.N {
		got, err := s.Inspect(context.Background(), "big")
		if err != nil || len(got.Events) != events {
			b.Fatal(err, fmt.Sprint(len(got.Events)))
		}
	}
}

// syntheticStore writes n sessions of 50 events each, spread over 4
// project folders, and opens a store on them.
func syntheticStore(b *testing.B, n int) *session.JSONL {
	root := b.TempDir()
	logs := make([]session.Log, n)
	for i := range logs {
		h := session.Header{ID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), CreatedAt: int64(i),
			Cwd: fmt.Sprintf("/work/project-%d", i%4), DelegationDepth: 1}
		events := make([]session.Event, 50)
		for j := range events {
			events[j] = session.Event{Type: "assistant/chunk", Seq: int64(j), Time: int64(j), Data: session.BenchData}
		}
		logs[i] = session.Log{Header: h, Events: events}
	}
	require.NoError(b, storetest.WriteSynthetic(root, logs...))
	s, err := session.OpenJSONL(root)
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkList lists a store of 2,000 sessions (~24 MB): one header read
// per session.
func BenchmarkList(b *testing.B) {
	s := syntheticStore(b, 2000)
	b.ResetTimer()
	for range b.N {
		headers, err := s.List(context.Background())
		if err != nil || len(headers) != 2000 {
			b.Fatal(err, len(headers))
		}
	}
}

// BenchmarkInspectByID looks up and reads one 50-event session in a store
// of 2,000.
func BenchmarkInspectByID(b *testing.B) {
	s := syntheticStore(b, 2000)
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i%2000)
		if _, err := s.Inspect(context.Background(), id); err != nil {
			b.Fatal(err)
		}
	}
}
