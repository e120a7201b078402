package session

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
)

func TestAChunkJoinsTheNextWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		syncers := &syncerFS{FS: sessionfs.OSFS{}}
		s := openStore(t, WithFS(syncers))
		reg := NewSessions(s)
		l, err := reg.Create(ctx, header("deferred"), nil)
		require.NoError(t, err)
		synctest.Wait()
		before := syncers.count()

		for _, typ := range []string{"chunk-1", "chunk-2"} {
			_, err := l.Append(chunkType, map[string]string{"id": typ})
			require.NoError(t, err)
		}
		synctest.Wait()
		require.Equal(t, 2, l.Len(), "chunks are in memory at once")
		require.Empty(t, storedTypes(t, s, "deferred"), "no write starts for a chunk")

		_, err = l.Append("hook/result", nil)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{chunkType, chunkType, "hook/result"}, storedTypes(t, s, "deferred"),
			"the next other event writes the chunks with it, without a flush")
		require.Len(t, syncers.since(before), 1, "in one write and one sync")
		require.NoError(t, reg.Release(ctx, l))
	})
}

func TestAChunkWaitsNoLongerThanItsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := openStore(t)
		reg := NewSessions(s)
		l, err := reg.Create(ctx, header("window"), nil)
		require.NoError(t, err)

		_, err = l.Append(chunkType, map[string]string{"id": "chunk-1"})
		require.NoError(t, err)
		time.Sleep(deferWindow / 2)
		_, err = l.Append(chunkType, map[string]string{"id": "chunk-2"})
		require.NoError(t, err)
		time.Sleep(deferWindow/2 - time.Millisecond)
		synctest.Wait()
		require.Empty(t, storedTypes(t, s, "window"), "still inside the window the first chunk opened")

		time.Sleep(time.Millisecond)
		synctest.Wait()
		require.Equal(t, []string{chunkType, chunkType}, storedTypes(t, s, "window"),
			"written when the window ends, with nothing else appended and no flush")

		_, err = l.Append(chunkType, map[string]string{"id": "chunk-3"})
		require.NoError(t, err)
		time.Sleep(deferWindow)
		synctest.Wait()
		require.Equal(t, []string{chunkType, chunkType, chunkType}, storedTypes(t, s, "window"),
			"a later chunk opens a window of its own")
		require.NoError(t, reg.Release(ctx, l))
	})
}

func TestFlushAndReleaseWriteWaitingChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := openStore(t)
		reg := NewSessions(s)
		l, err := reg.Create(ctx, header("flushed"), nil)
		require.NoError(t, err)

		_, err = l.Append(chunkType, map[string]string{"id": "chunk-1"})
		require.NoError(t, err)
		ok, err := reg.Flush(ctx, l)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, []string{chunkType}, storedTypes(t, s, "flushed"), "a flush writes a waiting chunk and confirms it")

		_, err = l.Append(chunkType, map[string]string{"id": "chunk-2"})
		require.NoError(t, err)
		require.NoError(t, reg.Release(ctx, l))
		require.Equal(t, []string{chunkType, chunkType}, storedTypes(t, s, "flushed"), "so does a release")
	})
}

func TestAppendThroughWritesWaitingChunks(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	reg := NewSessions(s)
	l, err := reg.Create(ctx, header("through"), nil)
	require.NoError(t, err)

	_, err = l.Append(chunkType, map[string]string{"id": "chunk-1"})
	require.NoError(t, err)
	_, err = l.AppendThrough("turn/end", nil)
	require.NoError(t, err)
	require.Equal(t, []string{chunkType, "turn/end"}, storedTypes(t, s, "through"))
	require.NoError(t, reg.Release(ctx, l))
}
