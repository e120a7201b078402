package query

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/session"
)

func child(id, label, status string) Entry {
	return Entry{Kind: KindChild, ID: id, Label: label, Status: status}
}

func diag(id, reason string) Entry {
	return Entry{Kind: KindDiagnostic, ID: id, Reason: reason}
}

func (w *world) list(parent string) ([]Entry, error) { return w.listAllWays(parent) }

func (w *world) mustList(parent string) []Entry {
	w.t.Helper()
	entries, err := w.list(parent)
	require.NoError(w.t, err)
	return entries
}

// parentWorld has a live parent "parent" with no children yet.
func parentWorld(t *testing.T) *world {
	w := newWorld(t)
	w.goLive(header("parent", "", 1), logOf(ev("turn/start", map[string]int{"turn": 1})))
	return w
}

func TestListsALiveChildAsRunning(t *testing.T) {
	w := parentWorld(t)
	w.goLive(header("fresh", "parent", 2), childEvents(descriptorPayload("fresh work")))
	require.Equal(t, []Entry{child("fresh", "fresh work", StatusRunning)}, w.mustList("parent"))
}

func TestFailsLoudBeforeAnyWorkWhenSessionQueryIsMissing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // missing service is reported before the cancellation check
	for _, q := range []Querier{nil, (*Query)(nil)} {
		_, err := ListChildren(ctx, q, "parent")
		var qerr *fault.Error
		require.ErrorAs(t, err, &qerr)
		require.Equal(t, fault.SessionQueryUnavailable, qerr.Code)
		require.ErrorIs(t, err, fault.SessionQueryUnavailable)
		require.EqualError(t, err, "listing subagents requires session query (load a dsh-session-query backend)")
	}
}

func TestListsAPersistedChildAsCompleteWithItsDurableLabel(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("settled", "parent", 2, "summarize the doc")
	require.Equal(t, []Entry{child("settled", "summarize the doc", StatusComplete)}, w.mustList("parent"))
}

func TestAcceptsAPersistedParentAfterRestart(t *testing.T) {
	w := newWorld(t)
	w.persist(header("parent", "", 1), nil)
	w.authorChild("kid", "parent", 2, "label")
	require.Equal(t, []Entry{child("kid", "label", StatusComplete)}, w.mustList("parent"))
}

func TestOrdersByCreatedAtThenIDAndOmitsOrdinaryForks(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("00000000-0000-4000-8000-000000000003", "parent", 9, "late")
	w.authorChild("00000000-0000-4000-8000-000000000002", "parent", 5, "tieB")
	w.authorChild("00000000-0000-4000-8000-000000000001", "parent", 5, "tieA")
	seed := w.sessions.Get("parent").Events()
	fork := session.Header{ID: "fork", ParentSession: "parent", CreatedAt: 6, SeedLength: intPtr(len(seed))}
	_, err := w.sessions.Create(context.Background(), fork, seed) // an ordinary fork: no descriptor
	require.NoError(t, err)
	w.persist(session.Header{ID: "stored-fork", ParentSession: "parent", CreatedAt: 7, SeedLength: intPtr(len(seed))},
		logOf(append(seed, ev("session/end-seed", map[string]any{}))...))

	require.Equal(t, []Entry{
		child("00000000-0000-4000-8000-000000000001", "tieA", StatusComplete),
		child("00000000-0000-4000-8000-000000000002", "tieB", StatusComplete),
		child("00000000-0000-4000-8000-000000000003", "late", StatusComplete),
	}, w.mustList("parent"))
}

func TestReportsLiveChildrenRunningAndStoredSiblingsComplete(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("settled", "parent", 2, "done")
	w.goLive(header("busy", "parent", 3), childEvents(descriptorPayload("busy")))
	// A stored child resumed into the registry is live (and persisted).
	w.authorChild("both", "parent", 4, "both")
	_, err := w.sessions.Resume(context.Background(), "both")
	require.NoError(t, err)
	require.Equal(t, []Entry{
		child("settled", "done", StatusComplete),
		child("busy", "busy", StatusRunning),
		child("both", "both", StatusRunning),
	}, w.mustList("parent"))
}

// troubledChildren is a world whose "parent" has a healthy child (created
// 1) and children with a duplicate descriptor (2), a message without its
// surface (3), a malformed (4) or unlabelled (5) descriptor and a future
// descriptor version (6).
func troubledChildren(t *testing.T) *world {
	t.Helper()
	w := parentWorld(t)
	w.authorChild("healthy", "parent", 1, "fine")
	events := childEvents(descriptorPayload("one"))
	w.persist(header("duplicate", "parent", 2), logOf(append(events, descriptorEvent(descriptorPayload("two")))...))
	w.persist(header("bad-surface", "parent", 3), logOf(
		ev("turn/start", map[string]int{"turn": 1}),
		withoutSurface(userMessage("no surfaceOp")),
		descriptorEvent(descriptorPayload("x")),
	))
	w.persist(header("malformed", "parent", 4), childEvents(map[string]any{"version": 1, "provider": 7, "label": "x"}))
	w.persist(header("unlabelled", "parent", 5), childEvents(map[string]any{"version": 1, "provider": "spawn"}))
	w.persist(header("future", "parent", 6), childEvents(map[string]any{"version": 2, "provider": "spawn", "label": "x"}))
	return w
}

func TestDiagnosesCorruptChildrenWithoutHidingHealthySiblings(t *testing.T) {
	w := troubledChildren(t)

	require.Equal(t, []Entry{
		child("healthy", "fine", StatusComplete),
		diag("duplicate", ReasonCorrupt),
		diag("bad-surface", ReasonCorrupt),
		diag("malformed", ReasonCorrupt),
		diag("unlabelled", ReasonCorrupt),
		diag("future", ReasonUnsupported),
	}, w.mustList("parent"))
}

func TestDuplicateDescriptorsNeedNoExactRead(t *testing.T) {
	w := parentWorld(t)
	w.persist(header("duplicate", "parent", 2),
		logOf(append(childEvents(descriptorPayload("one")), descriptorEvent(descriptorPayload("two")))...))
	fq := &faultQuerier{inner: w.q}
	entries, err := ListChildren(context.Background(), fq, "parent")
	require.NoError(t, err)
	require.Equal(t, []Entry{diag("duplicate", ReasonCorrupt)}, entries)
	_, lists, reads := fq.calls()
	require.Equal(t, 1, lists)
	require.Zero(t, reads)
}

func TestIgnoresAnAncestorDescriptorReplayedInsideAForkSeed(t *testing.T) {
	w := parentWorld(t)
	events := childEvents(descriptorPayload("ancestor"))
	w.persist(session.Header{ID: "fork", ParentSession: "parent", CreatedAt: 2, SeedLength: intPtr(len(events))}, events)
	require.Empty(t, w.mustList("parent"))
}

func TestCountsOnlyTheOwnSuffixDescriptor(t *testing.T) {
	w := parentWorld(t)
	seed := childEvents(descriptorPayload("ancestor"))
	events := logOf(append(append(seed, ev("session/end-seed", map[string]any{})),
		descriptorEvent(descriptorPayload("own")))...)
	w.persist(session.Header{ID: "forked-child", ParentSession: "parent", CreatedAt: 2, SeedLength: intPtr(len(seed))}, events)
	require.Equal(t, []Entry{child("forked-child", "own", StatusComplete)}, w.mustList("parent"))
}

func TestDoesNotFilterByProviderAvailability(t *testing.T) {
	w := parentWorld(t)
	w.persist(header("elsewhere", "parent", 2),
		childEvents(map[string]any{"version": 1, "provider": "not-mounted", "label": "still here"}))
	require.Equal(t, []Entry{child("elsewhere", "still here", StatusComplete)}, w.mustList("parent"))
}

func TestMapsPerChildReadFailuresToUnavailable(t *testing.T) {
	failures := map[string]*fault.Error{
		"persistence failed": newError(fault.QueryPersistenceFailed, "failed", nil),
		"vanished":           newError(fault.QuerySessionNotFound, "gone", nil),
	}
	for name, failure := range failures {
		t.Run("listEvents "+name, func(t *testing.T) {
			w := parentWorld(t)
			w.authorChild("flaky", "parent", 2, "l")
			w.authorChild("fine", "parent", 3, "ok")
			fq := &faultQuerier{inner: w.q, onListEvents: func(_ context.Context, id string, next func() (*eventList, error)) (*eventList, error) {
				if id == "flaky" {
					return nil, failure
				}
				return next()
			}}
			entries, err := ListChildren(context.Background(), fq, "parent")
			require.NoError(t, err)
			require.Equal(t, []Entry{diag("flaky", reasonUnavailable), child("fine", "ok", StatusComplete)}, entries)
		})
	}
	for _, code := range []fault.Code{fault.QueryEventNotFound, fault.QueryPersistenceFailed, fault.QuerySessionNotFound} {
		t.Run("readEvent "+string(code), func(t *testing.T) {
			w := parentWorld(t)
			w.authorChild("flaky", "parent", 2, "l")
			fq := &faultQuerier{inner: w.q, onReadEvent: func(context.Context, readRequest, func() (*eventWindow, error)) (*eventWindow, error) {
				return nil, newError(code, "read failed", nil)
			}}
			entries, err := ListChildren(context.Background(), fq, "parent")
			require.NoError(t, err)
			require.Equal(t, []Entry{diag("flaky", reasonUnavailable)}, entries)
		})
	}
}

func TestMapsAChildThatVanishedAfterTheTraceToUnavailable(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("gone", "parent", 2, "l")
	w.authorChild("stays", "parent", 3, "ok")
	fq := &faultQuerier{inner: w.q, onTrace: func(_ context.Context, _ string, next func() (*lineage, error)) (*lineage, error) {
		trace, err := next()
		require.NoError(t, os.RemoveAll(filepath.Dir(logPath(t, w.jsonl.Root(), "gone"))))
		return trace, err
	}}
	entries, err := ListChildren(context.Background(), fq, "parent")
	require.NoError(t, err)
	require.Equal(t, []Entry{diag("gone", reasonUnavailable), child("stays", "ok", StatusComplete)}, entries)
}

func TestMapsAStoredChildWithCommittedDamageToUnavailable(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("damaged", "parent", 2, "l")
	damageCommittedRegion(t, w.jsonl.Root(), "damaged")
	require.Equal(t, []Entry{diag("damaged", reasonUnavailable)}, w.mustList("parent"))
}

func TestListsATornChildFromItsValidPrefixWithoutRepairingIt(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("torn", "parent", 2, "l")
	path := logPath(t, w.jsonl.Root(), "torn")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"turn/start","seq":4,"ti`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	require.Equal(t, []Entry{child("torn", "l", StatusComplete)}, w.mustList("parent"))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

func TestDiagnosesExactReadMismatchesAsCorrupt(t *testing.T) {
	cases := map[string]func(win *eventWindow){
		"header no longer names this parent": func(win *eventWindow) { win.Session.ParentSession = "someone-else" },
		"incompatible header":                func(win *eventWindow) { win.Session.CreatedAt = 99 },
		"target is no longer the descriptor": func(win *eventWindow) { win.Target.Type = "turn/start" },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			w := parentWorld(t)
			w.authorChild("shifty", "parent", 2, "l")
			w.authorChild("fine", "parent", 3, "ok")
			fq := &faultQuerier{inner: w.q, onReadEvent: func(_ context.Context, req readRequest, next func() (*eventWindow, error)) (*eventWindow, error) {
				win, err := next()
				if req.SessionID == "shifty" {
					change(win)
				}
				return win, err
			}}
			entries, err := ListChildren(context.Background(), fq, "parent")
			require.NoError(t, err)
			require.Equal(t, []Entry{diag("shifty", ReasonCorrupt), child("fine", "ok", StatusComplete)}, entries)
		})
	}
}

func TestMapsPerChildSourceConflictToCorrupt(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("conflicted", "parent", 2, "l")
	fq := &faultQuerier{inner: w.q, onListEvents: func(context.Context, string, func() (*eventList, error)) (*eventList, error) {
		return nil, fault.New(fault.QuerySourceConflict, `session source headers conflict for session "conflicted"`, nil)
	}}
	entries, err := ListChildren(context.Background(), fq, "parent")
	require.NoError(t, err)
	require.Equal(t, []Entry{diag("conflicted", ReasonCorrupt)}, entries)
}

func TestFailsTheWholeCallWhenTheTraceFails(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("kid", "parent", 2, "l")
	w.store.listErr = errors.New("scan failed")
	_, err := w.list("parent")
	require.ErrorIs(t, err, fault.QueryPersistenceFailed)

	w.store.listErr = nil
	_, err = w.list("unknown-parent")
	require.ErrorIs(t, err, fault.QuerySessionNotFound)

	foreign := memoryOnly(t)
	goLive(t, foreign, header("parent", "", 1), nil)
	goLive(t, foreign, session.Header{ID: "kid", ParentSession: "parent", CreatedAt: 2, Cwd: "/moved"}, nil)
	_, err = ListChildren(context.Background(), w.foreignQuery(foreign), "parent")
	require.ErrorIs(t, err, fault.QuerySourceConflict, "a corpus-level conflict is not a per-child diagnostic")
}

func TestPropagatesUnrecognizedPerChildFailures(t *testing.T) {
	plain := errors.New("not a query failure")
	window := newError(fault.QueryInvalidWindow, "before must be an integer between 0 and 50", nil)
	for name, failure := range map[string]error{"plain error": plain, "window error": window} {
		t.Run(name, func(t *testing.T) {
			w := parentWorld(t)
			w.authorChild("kid", "parent", 2, "l")
			fq := &faultQuerier{inner: w.q, onListEvents: func(context.Context, string, func() (*eventList, error)) (*eventList, error) {
				return nil, failure
			}}
			_, err := ListChildren(context.Background(), fq, "parent")
			require.Same(t, failure, err)
		})
	}
}

func TestListsCompactedAndUncompactedChildrenIdentically(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("plain", "parent", 1, "twin")
	compacted := childEvents(descriptorPayload("twin"))
	compacted = logOf(append(compacted, withSources(replacing(userMessage("summary"), 1, 1), 1))...)
	w.persist(header("compacted", "parent", 2), compacted)

	records, err := w.q.ListEvents(context.Background(), "compacted")
	require.NoError(t, err)
	require.Equal(t, surfaceShadowed, records[1].Surface)
	require.Equal(t, []Entry{child("plain", "twin", StatusComplete), child("compacted", "twin", StatusComplete)},
		w.mustList("parent"))
}

func TestExcludesGrandchildren(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("kid", "parent", 2, "kid")
	w.authorChild("grandkid", "kid", 3, "grandkid")
	fq := &faultQuerier{inner: w.q}
	entries, err := ListChildren(context.Background(), fq, "parent")
	require.NoError(t, err)
	require.Equal(t, []Entry{child("kid", "kid", StatusComplete)}, entries)
	_, lists, reads := fq.calls()
	require.Equal(t, 1, lists, "a grandchild is never read")
	require.Equal(t, 1, reads)
}

func TestReturnsAnEmptyListForAParentWithoutChildren(t *testing.T) {
	w := parentWorld(t)
	entries := w.mustList("parent")
	require.NotNil(t, entries)
	require.Empty(t, entries)
}

func TestListingNeverWritesStorage(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("a", "parent", 2, "a")
	w.authorChild("b", "parent", 3, "b")
	damageCommittedRegion(t, w.jsonl.Root(), "b")
	durable, err := w.sessions.Flush(context.Background(), w.sessions.Get("parent"))
	require.NoError(t, err)
	require.True(t, durable)
	before := snapshotTree(t, w.jsonl.Root())
	w.mustList("parent")
	require.Equal(t, before, snapshotTree(t, w.jsonl.Root()))
	w.store.mu.Lock()
	defer w.store.mu.Unlock()
	require.Zero(t, w.store.loads, "listing never uses the repairing Load")
}

// snapshotTree maps every path under root to its contents and mode.
func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), "session-query.db") || path == root {
			return nil // the derived index (in the root) is not session storage
		}
		content := ""
		if !d.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			content = string(b)
		}
		out[path] = info.Mode().String() + info.ModTime().String() + content
		return nil
	}))
	return out
}

func TestListsWhileLiveChildrenKeepAppending(t *testing.T) {
	w := parentWorld(t)
	busy := w.goLive(header("busy", "parent", 2), childEvents(descriptorPayload("busy")))
	w.authorChild("settled", "parent", 3, "done")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5_000 { // bounded: every listing reads the whole live log, three ways
			select {
			case <-stop:
				return
			default:
				if _, err := busy.Append("assistant/chunk", map[string]int{"turn": 2}); err != nil {
					t.Error(err) // not require: this is not the test's goroutine
					return
				}
			}
		}
	}()
	for range 20 {
		require.Equal(t, []Entry{child("busy", "busy", StatusRunning), child("settled", "done", StatusComplete)},
			w.mustList("parent"))
	}
	close(stop)
	<-done
}

// The original breaks createdAt ties with JavaScript's localeCompare (ICU
// root collation), not byte order: letters before their capitals, case
// and accents only after the letters themselves, punctuation before digits
// before letters. The expected order is what node prints for these ids.
func TestOrdersTiedSiblingsAsTheOriginalsLocaleCompare(t *testing.T) {
	w := parentWorld(t)
	ids := []string{"Z-child", "z-child", "Y-child", "child-B", "child-b", "child-a", "a_b", "a-b", "ab", "aB",
		"10", "9", "é", "f", "~x", "_x"}
	for _, id := range ids {
		w.persist(header(id, "parent", 5), childEvents(descriptorPayload("tie "+id)))
	}
	want := []string{"_x", "~x", "10", "9", "a_b", "a-b", "ab", "aB", "child-a", "child-b", "child-B", "é", "f",
		"Y-child", "z-child", "Z-child"}
	var got []string
	for _, e := range w.mustList("parent") {
		got = append(got, e.ID)
	}
	require.Equal(t, want, got)
}

// TestReadsEachStoredChildsLogOnce: the listing reads each stored child's
// log once (its events and its descriptor come from that one read), and
// no log at all for a child without a descriptor beyond that read.
func TestReadsEachStoredChildsLogOnce(t *testing.T) {
	w := parentWorld(t)
	w.authorChild("first", "parent", 2, "one")
	w.authorChild("second", "parent", 3, "two")
	w.persist(header("plain", "parent", 4), logOf(ev("turn/start", map[string]int{"turn": 1})))
	_, before := w.store.counts()
	entries, err := ListChildren(context.Background(), w.q, "parent")
	require.NoError(t, err)
	require.Equal(t, []Entry{child("first", "one", StatusComplete), child("second", "two", StatusComplete)}, entries)
	_, after := w.store.counts()
	require.Equal(t, 3, after-before, "one read of each stored child's log")
}

// TestInspectChildLogAnswersAsInspectChild: for every kind of stored child
// (healthy, duplicate, malformed or unlabelled descriptors, a bad surface,
// a future version, a fork seed's replayed descriptor, none at all), the entry
// computed from its log already read is the one the listing's per-child
// read gives.
func TestInspectChildLogAnswersAsInspectChild(t *testing.T) {
	w := troubledChildren(t)
	seed := childEvents(descriptorPayload("ancestor"))
	w.persist(session.Header{ID: "fork", ParentSession: "parent", CreatedAt: 7, SeedLength: intPtr(len(seed))}, seed)
	w.persist(header("plain", "parent", 8), logOf(ev("turn/start", map[string]int{"turn": 1})))

	ctx := context.Background()
	headers, err := w.jsonl.List(ctx)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, h := range headers {
		if h.ParentSession != "parent" {
			continue
		}
		want, err := InspectChild(ctx, w.q, "parent", h, false)
		require.NoError(t, err)
		log, err := w.jsonl.Inspect(ctx, h.ID)
		require.NoError(t, err)
		got, err := InspectChildLog(ctx, h, log)
		require.NoError(t, err)
		require.Equal(t, want, got, h.ID)
		if got != nil {
			seen[got.Kind+"/"+got.Reason] = true
		}
	}
	require.Equal(t, map[string]bool{"child/": true, "diagnostic/corrupt": true, "diagnostic/unsupported": true}, seen)
}
