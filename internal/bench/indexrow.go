package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
)

// singleChildParent is a session of the generated store given exactly one
// continuable child (indexSingleChild), the small parent of row 8b.
var singleChildParent = storegen.ChildID(0)

const indexSingleChild = "single-child"

// indexRow is row 8: the derived index. 8a is ListChildren of D children
// among C sessions through a warm index against the unindexed reader on
// the same store; 8b is the p99 of subagent.list, served over loopback
// HTTP as `serve` serves it, under concurrent clients for the parent of D
// children against a parent of one child.
func indexRow(ctx context.Context, cfg Config) ([]Line, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "index-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	shape := storegen.Shape{Sessions: cfg.IndexSessions, Children: cfg.IndexChildren, Turns: 5}
	if _, err := GenerateStore(dir, shape); err != nil {
		return nil, err
	}
	if err := addSingleChild(dir); err != nil {
		return nil, err
	}
	age(dir)
	a, err := warmListing(ctx, cfg, shape, dir)
	if err != nil {
		return nil, err
	}
	b, err := concurrentListing(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	return []Line{a, b}, nil
}

// warmListing is 8a: a runtime on dir reading through its derived index
// (dsh.Open's default) against one reading the logs (NoIndex), both
// closed before 8b opens the served stack on the same root.
func warmListing(ctx context.Context, cfg Config, shape storegen.Shape, dir string) (line Line, err error) {
	indexed, err := dsh.Open(dsh.Options{Dir: dir})
	if err != nil {
		return Line{}, err
	}
	defer func() { err = errors.Join(err, indexed.Close()) }()
	unindexed, err := dsh.Open(dsh.Options{Dir: dir, NoIndex: true})
	if err != nil {
		return Line{}, err
	}
	defer func() { err = errors.Join(err, unindexed.Close()) }()
	return indexedListing(ctx, cfg, shape, indexed, unindexed)
}

func indexedListing(ctx context.Context, cfg Config, shape storegen.Shape, indexed, unindexed *dsh.Runtime) (Line, error) {
	var withIndex, withoutIndex Samples
	var err error
	list := func(rt *dsh.Runtime) {
		var children []agent.Child
		children, err = rt.Children(ctx, CatalogParent)
		if err == nil && len(children) != shape.Children {
			err = fmt.Errorf("listed %d children of %d", len(children), shape.Children)
		}
	}
	list(indexed) // the first listing builds the index
	for i := range cfg.IndexRounds + 1 {
		var x, u Samples
		x.Time(func() { list(indexed) })
		if err == nil {
			u.Time(func() { list(unindexed) })
		}
		if err != nil {
			return Line{}, err
		}
		if i > 0 {
			withIndex, withoutIndex = append(withIndex, x...), append(withoutIndex, u...)
		}
	}
	name := fmt.Sprintf("ListChildren, D=%d of C=%d, derived index", shape.Children, shape.Sessions)
	line, cerr := Compare("8a", name, Ns("indexed (warm)", withIndex.Median()), Ns("unindexed reader", withoutIndex.Median()),
		BaseOverOurs, &Target{Op: AtLeast, Value: 50})
	line.Note = fmt.Sprintf("medians of %d of Runtime.Children, with the index and with NoIndex; warm: the index is open and current (each call stats the root and project folders; the children's logs are watched, or stat'ed where inotify is missing); issue target also: indexed ≤ 5 ms", len(withIndex))
	return line, cerr
}

// concurrentListing is 8b: IndexClients callers each posting
// IndexRequests subagent.list calls to the served host over loopback HTTP,
// once for the parent of D children and once for the parent of one child,
// interleaved; the p99 of each, from request written to answer read.
func concurrentListing(ctx context.Context, cfg Config, dir string) (line Line, err error) {
	srv, err := openListServer(dir, cfg.IndexClients)
	if err != nil {
		return Line{}, err
	}
	defer func() { err = errors.Join(err, srv.close()) }()
	if err := srv.count(ctx, CatalogParent, cfg.IndexChildren); err != nil {
		return Line{}, err
	}
	if err := srv.count(ctx, singleChildParent, 1); err != nil {
		return Line{}, err
	}
	var big, small []time.Duration
	for range 2 {
		b, err := burst(ctx, cfg, srv, CatalogParent)
		if err != nil {
			return Line{}, err
		}
		s, err := burst(ctx, cfg, srv, singleChildParent)
		if err != nil {
			return Line{}, err
		}
		big, small = append(big, b...), append(small, s...)
	}
	name := fmt.Sprintf("subagent.list p99 under %d concurrent clients, D=%d vs D=1", cfg.IndexClients, cfg.IndexChildren)
	line, err = Compare("8b", name, Ns("p99, D children", p99(big)), Ns("p99, one child", p99(small)),
		OursOverBase, &Target{Op: AtMost, Value: 5})
	line.Note = fmt.Sprintf("%d calls each; the served path: HTTP on loopback → host RPC → Runtime.Children → derived index", len(big))
	return line, err
}

func burst(ctx context.Context, cfg Config, srv *listServer, parent string) ([]time.Duration, error) {
	var mu sync.Mutex
	var out []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	for range cfg.IndexClients {
		wg.Go(func() {
			buf := bytes.NewBuffer(make([]byte, 0, 1<<18)) // the client's own cost is reading, not growing
			for range cfg.IndexRequests {
				start := time.Now()
				err := srv.list(ctx, parent, buf)
				d := time.Since(start)
				mu.Lock()
				out = append(out, d)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out, firstErr
}

func p99(samples []time.Duration) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*99/100)].Nanoseconds())
}

// addSingleChild writes one continuable child of singleChildParent.
func addSingleChild(root string) error {
	_, err := storegen.Write(root, storegen.ContinuableChild(indexSingleChild, singleChildParent, 2))
	return err
}

// age sets every log's and project folder's mtime a minute back, so the
// index trusts the revisions and folder stamps of what the generator has
// just written.
func age(root string) {
	old := time.Now().Add(-time.Minute)
	_ = eachLog(root, func(path string) error {
		_ = os.Chtimes(path, old, old)
		_ = os.Chtimes(filepath.Dir(filepath.Dir(path)), old, old)
		return nil
	})
	_ = os.Chtimes(root, old, old)
}
