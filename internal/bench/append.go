package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// appendData is a ~200-byte event line once enveloped.
var appendData = json.RawMessage(`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,` +
	`"text":"lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore"}}`)

// AppendRate appends writers×each ~200-byte events to one live session of
// a fresh JSONL store in dir (over fsys; nil is the real file system):
// every writer appends one event and then waits until it is durable
// (Sessions.Flush), so concurrent writers share batches (group commit) and
// one writer pays one fdatasync per event. It returns events per second.
func AppendRate(ctx context.Context, dir string, fsys sessionfs.FS, writers, each int) (rate float64, err error) {
	var opts []session.Option
	if fsys != nil {
		opts = append(opts, session.WithFS(fsys))
	}
	store, err := session.OpenJSONL(dir, opts...)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := store.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	sessions := session.NewSessions(store)
	live, err := sessions.Create(ctx, session.Header{ID: "append-bench", CreatedAt: 1_783_000_000_000}, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if rerr := sessions.Release(context.WithoutCancel(ctx), live); rerr != nil && err == nil {
			err = rerr
		}
	}()
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range writers {
		wg.Go(func() {
			for range each {
				if _, err := live.Append(vocab.TypeAssistantChunk, appendData); err != nil {
					errs[w] = err
					return
				}
				ok, err := sessions.Flush(ctx, live)
				if err == nil && !ok {
					err = errors.New("flush did not confirm durability")
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(writers*each) / elapsed.Seconds(), nil
}

// appendRow is row 4: group commit (64 writers) against one fdatasync per
// event (one writer) and against no fsync at all (64 writers), in one run.
func appendRow(ctx context.Context, cfg Config) ([]Line, error) {
	run := func(name string, fsys sessionfs.FS, writers, each int) (float64, error) {
		dir, err := os.MkdirTemp(cfg.Dir, "append-"+name+"-*")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		return AppendRate(ctx, dir, fsys, writers, each)
	}
	const writers = 64
	group, err := run("group", nil, writers, cfg.AppendEach)
	if err != nil {
		return nil, err
	}
	perEvent, err := run("per-event", nil, 1, cfg.AppendSolo)
	if err != nil {
		return nil, err
	}
	noSync, err := run("no-sync", sessionfs.NoSync{}, writers, cfg.AppendEach)
	if err != nil {
		return nil, err
	}
	ours := PerSec("group commit", group, "events")
	a, err := Compare("4a", "append: group commit vs fsync/event", ours,
		PerSec("fsync per event", perEvent, "events"), OursOverBase, &Target{Op: AtLeast, Value: 20})
	if err != nil {
		return nil, err
	}
	a.Note = fmt.Sprintf("~200-byte events through Live.Append + Sessions.Flush; group commit and no fsync: %d writers × %d; per event: 1 writer × %d",
		writers, cfg.AppendEach, cfg.AppendSolo)
	b, err := Compare("4b", "append: group commit vs no fsync", ours,
		PerSec("no fsync", noSync, "events"), OursOverBase, &Target{Op: AtLeast, Value: 0.25, Percent: true})
	if err != nil {
		return nil, err
	}
	return []Line{a, b}, nil
}
