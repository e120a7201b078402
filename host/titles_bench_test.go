package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-actors/dsh-actors"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/storegen"
	"github.com/stretchr/testify/require"
)

// BenchmarkListSessionsAfterARestart is the first session.list of a
// backend that has read nothing yet (a restarted serve) over a store of
// 500 stored sessions: unindexed it reads every log for its title, indexed
// the index (already built by an earlier process) answers after its walk.
// Compare the two sub-benchmarks' ns/op of one run.
func BenchmarkListSessionsAfterARestart(b *testing.B) {
	root := b.TempDir()
	_, err := storegen.Generate(root, storegen.Shape{Sessions: 500, Children: 10, Turns: 4})
	require.NoError(b, err)
	old := time.Now().Add(-time.Hour)
	require.NoError(b, filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err == nil && filepath.Base(path) == logpath.FileName {
			err = os.Chtimes(path, old, old)
		}
		return err
	}))
	ctx := context.Background()
	earlier, err := dsh.Open(dsh.Options{Dir: root})
	require.NoError(b, err)
	_, err = earlier.Sessions(ctx) // the earlier process that built the index
	require.NoError(b, err)
	require.NoError(b, earlier.Close())
	for name, noIndex := range map[string]bool{"unindexed": true, "indexed": false} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				opened, err := dsh.Open(dsh.Options{Dir: root, NoIndex: noIndex})
				require.NoError(b, err)
				backend := newRuntimeBackend(opened)
				summaries, err := backend.ListSessions(ctx)
				require.NoError(b, opened.Close())
				backend.close()
				require.NoError(b, err)
				require.Len(b, summaries, 500)
				require.Equal(b, "lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet", summaries[0].Title)
			}
		})
	}
}
