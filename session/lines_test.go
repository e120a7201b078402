package session

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The exported line codec writes what the JSONL store writes, byte for
// byte: the header, appended events and the closers of an open turn.
func TestTheLineCodecWritesTheStoresBytes(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("codec")
	require.NoError(t, s.Create(ctx, h, nil))
	events := turnEvents(0, 3)
	events[1].SurfaceOp = []byte(`"append"`)
	events[2].SourceEventSeqs = []int64{0, 1}
	require.NoError(t, s.Append(ctx, "codec", events))
	file, err := os.ReadFile(logPathOf(t, s, h))
	require.NoError(t, err)

	headerLine, err := HeaderLine(h)
	require.NoError(t, err)
	eventLines, err := EventLines("codec", 0, events)
	require.NoError(t, err)
	want := string(headerLine) + "\n"
	for _, l := range eventLines {
		want += string(l) + "\n"
	}
	require.Equal(t, string(file), want)

	_, err = EventLines("codec", 1, events)
	require.ErrorIs(t, err, ErrSeqMismatch)
	_, err = HeaderLine(Header{ID: "rel", Cwd: "relative"})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestLoadRepairGivesLoadsClosersAndLines(t *testing.T) {
	sc, err := scanLog([]byte(headerLineOf(t, header("open"))+lines(openTurnLines...)), "open")
	require.NoError(t, err)
	log := &Log{Header: sc.header, Events: sc.events}
	closers, closerLines, err := LoadRepair(log, "open")
	require.NoError(t, err)
	require.Len(t, closers, len(openTurnClosers))
	got := make([]string, len(closerLines))
	for i, l := range closerLines {
		got[i] = string(l)
	}
	require.Equal(t, strings.Join(openTurnClosers, "\n"), strings.Join(got, "\n"))
	none, noLines, err := LoadRepair(&Log{Header: log.Header, Events: log.Events[:2]}, "open")
	require.NoError(t, err)
	require.Empty(t, none)
	require.Empty(t, noLines)
}
