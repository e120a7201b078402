package storegen

import (
	"context"
	"errors"
	"testing"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The generated store opens cleanly: Parent and its children with their
// descriptors, the other families, and the byte count of what it wrote.
func TestGenerate(t *testing.T) {
	root := t.TempDir()
	size, err := Generate(root, Shape{Sessions: 25, Children: 4, Turns: 1})
	require.NoError(t, err)
	require.Positive(t, size)
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	defer store.Close()
	ctx := context.Background()
	headers, err := store.List(ctx)
	require.NoError(t, err)
	require.Len(t, headers, 25)
	var children int
	for _, h := range headers {
		if h.ParentSession == Parent {
			children++
		}
	}
	require.Equal(t, 4, children)

	child, err := store.Inspect(ctx, ChildID(3))
	require.NoError(t, err)
	require.Equal(t, Parent, child.Header.ParentSession)
	require.Len(t, child.Events, 12, "descriptor, end-seed, one turn of ten")
	require.Equal(t, vocab.TypeSubagentDescriptor, child.Events[0].Type)
	d, err := descriptor.Parse(child.Events[0].Data)
	require.NoError(t, err)
	require.Equal(t, "child task 3", d.Label)

	parent, err := store.Inspect(ctx, Parent)
	require.NoError(t, err)
	require.Len(t, parent.Events, 10)

	small := t.TempDir()
	_, err = Generate(small, Shape{Sessions: 4, Children: 4})
	require.NoError(t, err)
	smallStore, err := session.OpenJSONL(small)
	require.NoError(t, err)
	defer smallStore.Close()
	headers, err = smallStore.List(ctx)
	require.NoError(t, err)
	require.Len(t, headers, 5, "the parent and its four children, no others")
}

// RelistingStore finds what the store lists and reports the rest as not
// found.
func TestRelistingStore(t *testing.T) {
	root := t.TempDir()
	_, err := Generate(root, Shape{Sessions: 3, Children: 1, Turns: 1})
	require.NoError(t, err)
	store, err := session.OpenJSONL(root)
	require.NoError(t, err)
	defer store.Close()
	relisting := RelistingStore{store}
	ctx := context.Background()
	got, err := relisting.Inspect(ctx, ChildID(0))
	require.NoError(t, err)
	require.Equal(t, ChildID(0), got.Header.ID)
	_, err = relisting.Inspect(ctx, ChildID(1))
	require.True(t, errors.Is(err, session.ErrNotFound), "%v", err)
}
