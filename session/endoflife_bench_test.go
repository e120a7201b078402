package session

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/cpuclock"
)

// endOfLifeSizes are BenchmarkEndOfLife's sizes (DSH_END_OF_LIFE_LOGS,
// comma-separated; 1000,100000 for row 9's sizes).
func endOfLifeSizes(b *testing.B) []int {
	sizes := []int{1000, 20000}
	if env := os.Getenv("DSH_END_OF_LIFE_LOGS"); env != "" {
		sizes = sizes[:0]
		for part := range strings.SplitSeq(env, ",") {
			n, err := strconv.Atoi(part)
			if err != nil || n < 1 {
				b.Fatalf("DSH_END_OF_LIFE_LOGS: %q is not a positive number", part)
			}
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// BenchmarkEndOfLife is the store's part of a drained child, for every
// log of a store holding that many leased logs under the process's
// default kept-file budget: its turn's end appended under its lease,
// the lease released and the log released, one log after another in
// creation order, as a drain ends them. cpu-ns/log is the process's CPU
// time per log; compare the sizes (row 9's 9d and its floor 9i).
// Run it with -benchtime=1x: one iteration ends every log.
func BenchmarkEndOfLife(b *testing.B) {
	for _, n := range endOfLifeSizes(b) {
		b.Run(fmt.Sprintf("logs=%d", n), func(b *testing.B) {
			var cpu int64
			for b.Loop() {
				b.StopTimer()
				store, epochs, ids := leasedLogs(b, n)
				b.StartTimer()
				start := cpuclock.Process()
				for i, id := range ids {
					st := store.existingState(id)
					require.NoError(b, st.append(epochs[i], []Event{{Type: "turn/end", Seq: 1, Time: 1, Data: turnEndData}}))
					require.NoError(b, st.releaseLease(epochs[i]))
					st.release()
				}
				cpu += int64(cpuclock.Process() - start)
				b.StopTimer()
				require.NoError(b, store.Close())
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu)/float64(b.N*n), "cpu-ns/log")
		})
	}
}

var turnEndData = []byte(`{"turn":1,"reason":{"kind":"aborted"}}`)

// leasedLogs opens a store in a new folder and creates n logs in one
// project, each leased, as a parent's live children are.
func leasedLogs(b *testing.B, n int) (*JSONL, []Epoch, []string) {
	store, err := OpenJSONL(b.TempDir(), WithFS(noSyncFS{}), withKeptFiles(defaultKeptFiles()))
	require.NoError(b, err)
	ctx := context.Background()
	ids, epochs := make([]string, n), make([]Epoch, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		require.NoError(b, store.Create(ctx, Header{ID: ids[i], CreatedAt: 1, Cwd: "/work/project"},
			[]Event{{Type: "subagent/descriptor", Seq: 0, Time: 1, Data: benchData}}))
		if epochs[i], err = store.Acquire(ctx, ids[i]); err != nil {
			b.Fatal(err)
		}
	}
	return store, epochs, ids
}
