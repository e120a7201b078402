package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/dsh-actors/dsh-actors/query"
	"github.com/dsh-actors/dsh-actors/session"
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

// ListChildren opens the store at root afresh (no live sessions, as
// `dsh-actors list` does), lists CatalogParent's children and closes it,
// returning how many entries it listed. seedCost wraps the store in the
// seed's relisting cost model.
func ListChildren(ctx context.Context, root string, seedCost bool) (int, error) {
	jsonl, err := session.OpenJSONL(root)
	if err != nil {
		return 0, err
	}
	defer jsonl.Close()
	var store session.Store = jsonl
	if seedCost {
		store = storegen.RelistingStore{Store: jsonl}
	}
	entries, err := query.ListChildren(ctx, query.New(session.NewSessions(store)), CatalogParent)
	return len(entries), err
}

// RawCatalogRead is the floor of what a listing must read: the first line
// of every log under root (to find the children) and then every child's
// whole log once, with no parsing beyond finding the parent's id. It
// returns how many children it read.
func RawCatalogRead(root string) (int, error) {
	projects, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	needle := []byte(`"parentSession":"` + CatalogParent + `"`)
	var children []string
	for _, p := range projects {
		sessions, err := os.ReadDir(filepath.Join(root, p.Name()))
		if err != nil {
			return 0, err
		}
		for _, s := range sessions {
			path := filepath.Join(root, p.Name(), s.Name(), logpath.FileName)
			first, err := firstLine(path)
			if err != nil {
				return 0, err
			}
			if bytes.Contains(first, needle) {
				children = append(children, path)
			}
		}
	}
	for _, path := range children {
		if _, err := os.ReadFile(path); err != nil {
			return 0, err
		}
	}
	return len(children), nil
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
// sessions, against the raw read of the same bytes and (when cfg.SeedCost)
// against a catalog that relists the whole store per read (RelistingStore).
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
		o.Time(func() { oerr = check(ListChildren(ctx, dir, false)) })
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
	a.Note = fmt.Sprintf("store of %.1f MB, ~50-event logs, page cache warm, store opened afresh each time; medians of %d; raw: first line of every log, then each child's whole log",
		float64(size)/1e6, len(ours))
	lines := []Line{a}
	if cfg.SeedCost {
		var seed Samples
		seed.Time(func() { oerr = check(ListChildren(ctx, dir, true)) })
		if oerr != nil {
			return nil, oerr
		}
		b, err := Compare("7b", name+", vs seed", Ns("list", ours.Median()),
			Ns("seed's O(D×C) algorithm", seed.Median()), BaseOverOurs, nil)
		if err != nil {
			return nil, err
		}
		b.Note = "the seed's cost model: every per-child read lists the whole store first (one run, same store, same results)"
		lines = append(lines, b)
	}
	return lines, nil
}
