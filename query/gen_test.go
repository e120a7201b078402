package query

import (
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/storegen"
)

// A catalog-sized store (C = 2,000 sessions, ~24 MB, D = 200
// children of one parent) for timing `dsh-actors list` from a cold process:
//
//	go test ./query -run TestGenerateReferenceStore -args -gen.store DIR
//	time dsh-actors list --store DIR parent
var (
	genStore    = flag.String("gen.store", "", "write the reference session store to this folder")
	genSessions = flag.Int("gen.sessions", 2000, "sessions in the generated store")
	genChildren = flag.Int("gen.children", 200, "direct continuable children of the session \"parent\"")
)

func TestGenerateReferenceStore(t *testing.T) {
	if *genStore == "" {
		t.Skip("pass -args -gen.store DIR to write the reference store")
	}
	require.NoError(t, os.MkdirAll(*genStore, 0o700))
	bytes, err := storegen.Generate(*genStore, storegen.Shape{Sessions: *genSessions, Children: *genChildren, Turns: 5})
	require.NoError(t, err)
	t.Logf("wrote %d sessions (%d children of %q), %.1f MB, to %s",
		*genSessions, *genChildren, storegen.Parent, float64(bytes)/1e6, *genStore)
}
