package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
)

// CatalogParent is the id of the session whose children the generated
// store (storegen.Generate) holds and the catalog measurements list.
const CatalogParent = storegen.Parent

// GenerateStore is storegen.Generate for row 7: it refuses a shape whose
// children are not fewer than its sessions (a configuration error there).
func GenerateStore(root string, shape storegen.Shape) (int64, error) {
	if shape.Children >= shape.Sessions {
		return 0, fmt.Errorf("bench: %d children need more than %d sessions", shape.Children, shape.Sessions)
	}
	return storegen.Generate(root, shape)
}

// ListChildren opens a runtime on the store at root afresh with dsh.Open
// (reading the logs, without the derived index; no live sessions, as
// `dsh-actors list` does), lists CatalogParent's children and closes it,
// returning how many entries it listed.
func ListChildren(ctx context.Context, root string) (n int, err error) {
	rt, err := dsh.Open(dsh.Options{Dir: root, NoIndex: true})
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, rt.Close()) }()
	children, err := rt.Children(ctx, CatalogParent)
	return len(children), err
}

// RawCatalogRead is the floor of what a listing must read: the first line
// of every log under root (to find the children) and then every child's
// whole log once, with no parsing beyond finding the parent's id. It
// returns how many children it read.
func RawCatalogRead(root string) (int, error) {
	needle := []byte(`"parentSession":"` + CatalogParent + `"`)
	var children []string
	err := eachLog(root, func(path string) error {
		first, err := firstLine(path)
		if err == nil && bytes.Contains(first, needle) {
			children = append(children, path)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	for _, path := range children {
		if _, err := os.ReadFile(path); err != nil {
			return 0, err
		}
	}
	return len(children), nil
}

// eachLog calls fn with the path of every log of the JSONL store at root
// (root/PROJECT/SESSION/session.jsonl), stopping at its first error.
func eachLog(root string, fn func(path string) error) error {
	projects, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		sessions, err := os.ReadDir(filepath.Join(root, p.Name()))
		if err != nil {
			return err
		}
		for _, s := range sessions {
			if err := fn(filepath.Join(root, p.Name(), s.Name(), "session.jsonl")); err != nil {
				return err
			}
		}
	}
	return nil
}

func firstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("%s: first line: %w", path, err)
	}
	return line, nil
}

// catalogRow is row 7: ListChildren of D children among C generated
// sessions, against the raw read of the same bytes. The seed's O(D×C)
// cost model wraps the store's internals: it is query's
// BenchmarkListChildrenSeedCost.
func catalogRow(ctx context.Context, cfg Config) ([]Line, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "catalog-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	shape := storegen.Shape{Sessions: cfg.CatalogSessions, Children: cfg.CatalogChildren, Turns: 5}
	size, err := GenerateStore(dir, shape)
	if err != nil {
		return nil, err
	}
	var ours, raw Samples
	var oerr error
	check := func(n int, err error) error {
		if err == nil && n != shape.Children {
			err = fmt.Errorf("listed %d children of %d", n, shape.Children)
		}
		return err
	}
	for i := range cfg.CatalogRounds + 1 { // the first round warms the page cache
		var o, r Samples
		o.Time(func() { oerr = check(ListChildren(ctx, dir)) })
		if oerr != nil {
			return nil, oerr
		}
		r.Time(func() { oerr = check(RawCatalogRead(dir)) })
		if oerr != nil {
			return nil, oerr
		}
		if i > 0 {
			ours, raw = append(ours, o...), append(raw, r...)
		}
	}
	name := fmt.Sprintf("ListChildren, D=%d of C=%d", shape.Children, shape.Sessions)
	a, err := Compare("7a", name, Ns("list", ours.Median()), Ns("raw read of those files", raw.Median()), OursOverBase, nil)
	if err != nil {
		return nil, err
	}
	a.Note = fmt.Sprintf("store of %.1f MB, ~50-event logs, page cache warm, a runtime opened on it afresh each time (dsh.Open, Children, Close; no index); medians of %d; raw: first line of every log, then each child's whole log; the seed's O(D×C) algorithm: go test -bench SeedCost ./query",
		float64(size)/1e6, len(ours))
	return []Line{a}, nil
}
