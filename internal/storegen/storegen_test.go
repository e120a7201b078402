package storegen

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	dsh "github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openStore opens root through the root package, as an embedder would,
// and closes the runtime when the test ends.
func openStore(t *testing.T, root string) *dsh.Runtime {
	t.Helper()
	rt, err := dsh.Open(dsh.Options{Dir: root})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	return rt
}

// TestGenerateOpensThroughTheRoot: a generated store opens with dsh.Open,
// which lists its sessions, catalogs Parent's children with their labels
// and reads a child's log: descriptor, end-seed, one turn of ten events.
func TestGenerateOpensThroughTheRoot(t *testing.T) {
	root := t.TempDir()
	size, err := Generate(root, Shape{Sessions: 25, Children: 4, Turns: 1})
	require.NoError(t, err)
	require.Positive(t, size)
	rt := openStore(t, root)
	ctx := context.Background()

	sessions, err := rt.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, sessions, 25)
	children, err := rt.Children(ctx, Parent)
	require.NoError(t, err)
	require.Len(t, children, 4)
	require.Contains(t, children, agent.Child{ID: ChildID(3), Label: "child task 3", Status: "complete"})

	child, err := rt.History(ctx, ChildID(3))
	require.NoError(t, err)
	require.Equal(t, Parent, child.Header.ParentSession)
	require.Len(t, child.Events, 12, "descriptor, end-seed, one turn of ten")
	require.Equal(t, "subagent/descriptor", child.Events[0].Type)
	parent, err := rt.History(ctx, Parent)
	require.NoError(t, err)
	require.Len(t, parent.Events, 10)
	for _, e := range parent.Events {
		_, err := e.Payload()
		require.NoError(t, err, "event %d (%s)", e.Seq, e.Type)
	}
}

// TestGenerateWritesParentAndChildrenAtLeast: a shape with no room for
// other sessions still holds Parent and all its children.
func TestGenerateWritesParentAndChildrenAtLeast(t *testing.T) {
	root := t.TempDir()
	_, err := Generate(root, Shape{Sessions: 4, Children: 4})
	require.NoError(t, err)
	sessions, err := openStore(t, root).Sessions(context.Background())
	require.NoError(t, err)
	require.Len(t, sessions, 5, "the parent and its four children, no others")
}

// TestContinuableChildResumes: the continuable child is a settled child
// of about n events that the root reads, and a follow-up from its parent
// cold-resumes it and runs a turn after the stored ones.
func TestContinuableChildResumes(t *testing.T) {
	root := t.TempDir()
	log := ContinuableChild("cold-child", "parent", 100)
	require.Len(t, log.Events, 104)
	_, err := Write(root, log, Log{Header: Header{ID: "parent", CreatedAt: 1_700_000_000_000}})
	require.NoError(t, err)
	rt := openStore(t, root)
	ctx := context.Background()
	got, err := rt.History(ctx, "cold-child")
	require.NoError(t, err)
	require.Len(t, got.Events, 104)
	require.Equal(t, "parent", got.Header.ParentSession)

	p, err := rt.ResumeAgent(ctx, "parent")
	require.NoError(t, err)
	_, err = rt.Send(ctx, p, "cold-child", event.Text("again"))
	require.NoError(t, err)
	end, ok, err := rt.WaitChild(ctx, "cold-child")
	require.NoError(t, err)
	require.True(t, ok, "the resumed child's epoch ended")
	require.Equal(t, agent.Completed, end.StopReason)
}

// TestWriteRefusesASeqThatIsNotTheIndex: events must number 0, 1, 2, …
func TestWriteRefusesASeqThatIsNotTheIndex(t *testing.T) {
	_, err := Write(t.TempDir(), Log{Header: Header{ID: "gap", CreatedAt: 1},
		Events: []Event{{Type: "feedback/record", Seq: 1, Data: json.RawMessage(`{}`)}}})
	require.ErrorIs(t, err, errSeq)
}

// TestWriteRefusesAnEmptyID: no folder is named for a session without an
// id.
func TestWriteRefusesAnEmptyID(t *testing.T) {
	root := t.TempDir()
	_, err := Write(root, Log{Header: Header{CreatedAt: 1}})
	require.Error(t, err)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries)
}
