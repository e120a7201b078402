package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/cpuclock"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

// benchData is a ~200-byte event line once enveloped.
var benchData = json.RawMessage(`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,` +
	`"text":"lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore"}}`)

// noSyncFS is the real file system with Sync and SyncDir made no-ops: the
// "no fsync" baseline.
type noSyncFS = sessionfs.NoSync

// appendConcurrently appends writers×each single-event batches to log id
// (which holds first events) from concurrent goroutines. Each takes the
// next seq and enqueues under one lock, so seqs arrive in order, but waits
// for durability outside it, which is what lets batches form.
func appendConcurrently(tb testing.TB, s *JSONL, id string, first int64, writers, each int) {
	var mu sync.Mutex
	next := first
	appendOne := func() error {
		mu.Lock()
		e := Event{Type: "assistant/chunk", Seq: next, Time: next, Data: benchData}
		data, err := encodeBatch(id, e.Seq, []Event{e}, nil)
		var bt *batch
		if err == nil {
			bt, err = enqueue(s, id, []Event{e}, data)
		}
		if err == nil {
			next++
		}
		mu.Unlock()
		if err != nil {
			return err
		}
		return <-bt.done
	}
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := appendOne(); err != nil {
					tb.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// appendWorkload runs appendConcurrently on a fresh log over fsys and
// returns the events acknowledged per second.
func appendWorkload(b *testing.B, fsys sessionfs.FS, writers, each int) float64 {
	s, err := OpenJSONL(b.TempDir(), WithFS(fsys))
	require.NoError(b, err)
	defer s.Close()
	require.NoError(b, s.Create(context.Background(), header("bench"), nil))
	start := time.Now()
	appendConcurrently(b, s, "bench", 0, writers, each)
	return float64(writers*each) / time.Since(start).Seconds()
}

// BenchmarkAppendDurability measures, in one run, durable appends to one
// log with group commit (64 concurrent writers), with one fdatasync per
// event (one writer, one event per append), and without any sync (64
// writers), and reports the rates and the ratios the issue targets
// (group/per-event ≥ 20, group/no-sync ≥ 0.25).
func BenchmarkAppendDurability(b *testing.B) {
	benchDurability(b, appendWorkload, 200, 500)
}

// BenchmarkLiveAppendFlush measures the live path: 64 goroutines each
// appending to one Live session and waiting for Sessions.Flush, so every
// event is acknowledged durable.
func BenchmarkLiveAppendFlush(b *testing.B) {
	ctx := context.Background()
	s, err := OpenJSONL(b.TempDir())
	require.NoError(b, err)
	defer s.Close()
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("live-bench"), nil)
	require.NoError(b, err)
	const writers, each = 64, 100
	start := time.Now()
	for range b.N {
		var wg sync.WaitGroup
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					if _, err := l.Append("assistant/chunk", benchData); err != nil {
						b.Error(err)
						return
					}
					if _, err := reg.Flush(ctx, l); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.N*writers*each)/time.Since(start).Seconds(), "events/s")
	require.NoError(b, reg.Release(ctx, l))
}

// liveAppendRate appends writers×each ~200-byte events to one live session
// of a fresh store over fsys, every writer waiting after each event until
// it is durable (Sessions.Flush), and returns events per second.
func liveAppendRate(b *testing.B, fsys sessionfs.FS, writers, each int) float64 {
	ctx := context.Background()
	s, err := OpenJSONL(b.TempDir(), WithFS(fsys))
	require.NoError(b, err)
	defer s.Close()
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("live-durability"), nil)
	require.NoError(b, err)
	var wg sync.WaitGroup
	start := time.Now()
	for range writers {
		wg.Go(func() {
			for range each {
				if _, err := l.Append("assistant/chunk", benchData); err != nil {
					b.Error(err)
					return
				}
				if ok, err := reg.Flush(ctx, l); err != nil || !ok {
					b.Error("flush did not confirm durability", err)
					return
				}
			}
		})
	}
	wg.Wait()
	rate := float64(writers*each) / time.Since(start).Seconds()
	require.NoError(b, reg.Release(ctx, l))
	return rate
}

// BenchmarkLiveAppendDurability is the live path's append rate by
// durability, in one run: 64 writers sharing group commits, one writer
// paying one fdatasync per event, and 64 writers without any sync, each
// event acknowledged durable (Live.Append, then Sessions.Flush). It
// reports the rates and the ratios group/per-event (target ≥ 20) and
// group/no-fsync (target ≥ 0.25). No public call appends an event and
// waits for it alone, so `dsh-actors bench` leaves this to go test.
func BenchmarkLiveAppendDurability(b *testing.B) {
	benchDurability(b, liveAppendRate, 300, 1_000)
}

// benchDurability runs rate, the events/s of one workload, with group
// commit (64 writers, perWriter events each), with one fdatasync per
// event (one writer, single events) and without any sync (64 writers),
// and reports the three rates and their ratios.
func benchDurability(b *testing.B, rate func(b *testing.B, fs sessionfs.FS, writers, events int) float64, perWriter, single int) {
	var group, perEvent, noSync float64
	for range b.N {
		group += rate(b, sessionfs.OSFS{}, 64, perWriter)
		perEvent += rate(b, sessionfs.OSFS{}, 1, single)
		noSync += rate(b, noSyncFS{}, 64, perWriter)
	}
	n := float64(b.N)
	b.ReportMetric(group/n, "group-events/s")
	b.ReportMetric(perEvent/n, "per-event-fsync-events/s")
	b.ReportMetric(noSync/n, "no-fsync-events/s")
	b.ReportMetric(group/perEvent, "group/per-event")
	b.ReportMetric(group/noSync, "group/no-fsync")
}

// BenchmarkEncodeData encodes a small struct payload, the common case of
// Live.Append.
func BenchmarkEncodeData(b *testing.B) {
	type turnStep struct {
		Turn int `json:"turn"`
		Step int `json:"step"`
	}
	b.ReportAllocs()
	for range b.N {
		if _, err := encodeData(turnStep{Turn: 1, Step: 2}); err != nil {
			b.Fatal(err)
		}
	}
}

// enqueue queues one encoded batch for log id's writer without waiting
// for it (the waiting half of Append), so that benchmarks can hold many
// batches in flight from one lock.
func enqueue(s *JSONL, id string, events []Event, data []byte) (*batch, error) {
	st, err := s.state(id)
	if err != nil {
		return nil, err
	}
	b, _, err := s.enqueueWith(context.Background(), st, events, data, false, 0)
	return b, err
}

// BenchmarkCreateFloor measures, interleaved in one run, JSONL.Create of a
// new session without fsync and the floor under it: the same system calls
// made directly (mkdir of the session folder, an O_EXCL create of the
// temporary file, one write, link, unlink) with no store code around
// them. It reports both per create and their ratio; a ratio near 1 means
// the file system, not the store, is the cost.
func BenchmarkCreateFloor(b *testing.B) {
	store, err := OpenJSONL(b.TempDir(), WithFS(noSyncFS{}))
	require.NoError(b, err)
	defer store.Close()
	raw := filepath.Join(b.TempDir(), "_no-cwd")
	require.NoError(b, os.Mkdir(raw, 0o700))
	line := append(appendHeader(nil, Header{ID: "x", CreatedAt: 1}), '\n')
	var create, floor time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("create-%07d", i)
		start := time.Now()
		require.NoError(b, store.Create(context.Background(), Header{ID: id, CreatedAt: 1}, nil))
		create += time.Since(start)
		start = time.Now()
		rawCreate(b, filepath.Join(raw, id), line)
		floor += time.Since(start)
		i++
	}
	b.ReportMetric(float64(create.Nanoseconds())/float64(i), "create-ns/op")
	b.ReportMetric(float64(floor.Nanoseconds())/float64(i), "floor-ns/op")
	b.ReportMetric(float64(create)/float64(floor), "create/floor")
}

func rawCreate(b *testing.B, dir string, data []byte) {
	require.NoError(b, os.Mkdir(dir, 0o700))
	tmp, final := filepath.Join(dir, logpath.FileName+".tmp"), filepath.Join(dir, logpath.FileName)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(b, err)
	_, err = f.Write(data)
	require.NoError(b, err)
	require.NoError(b, os.Link(tmp, final))
	require.NoError(b, os.Remove(tmp))
	require.NoError(b, f.Close())
}

// BenchmarkAppendReopened is one append to each of 2,000 idle logs, with
// every log keeping its file (kept) and with none (reopened: the log's
// file was given up, as the kept-file budget does for the logs beyond it,
// so the append opens and closes it): their difference is what a log
// beyond the budget pays at the end of its life (its turn's end and
// release), the one open(2) and close(2) no log can skip without holding
// a descriptor.
func BenchmarkAppendReopened(b *testing.B) {
	const logs = 2000
	for _, c := range []struct {
		name string
		kept int
	}{{"kept", logs}, {"reopened", 0}} {
		b.Run(c.name, func(b *testing.B) {
			store, err := OpenJSONL(b.TempDir(), WithFS(noSyncFS{}), withKeptFiles(c.kept))
			require.NoError(b, err)
			defer store.Close()
			ctx := context.Background()
			ids := make([]string, logs)
			for i := range ids {
				ids[i] = fmt.Sprintf("idle-%05d", i)
				require.NoError(b, store.Create(ctx, Header{ID: ids[i], CreatedAt: 1}, nil))
			}
			seq, cpu := int64(0), cpuclock.Process()
			for i := 0; b.Loop(); i++ {
				id := ids[i%logs]
				require.NoError(b, store.Append(ctx, id, []Event{{Type: "assistant/chunk", Seq: seq, Time: 1, Data: benchData}}))
				if i%logs == logs-1 {
					seq++
				}
			}
			b.ReportMetric(float64((cpuclock.Process()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
