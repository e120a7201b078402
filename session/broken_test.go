package session

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A repairing load that cuts a log keeps every removed byte beside it in
// session.jsonl.broken and warns naming the file and the byte count: a
// torn tail, and damage inside the unfinished last turn, whose later valid
// lines the cut drops as the original does. A second cut appends to the
// same file.
func TestRepairKeepsCutBytesInBrokenFile(t *testing.T) {
	ctx := context.Background()
	h := header("cut")
	committed := headerLineOf(t, h) + lines(openTurnLines[:4]...)
	for _, c := range []struct {
		name, tail string
	}{
		{"torn tail", `{"type":"tool/call","seq":4,"ti`},
		{"damage inside the open turn", lines(`{"type":"feedback/record","seq":4,`, openTurnLines[4], `{"type":"feedback/record","seq":6,"time":1,"data":{}}`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logged bytes.Buffer
			s := openStore(t, WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
			path := writeRaw(t, s, h, committed+c.tail)
			log, err := s.Load(ctx, h.ID)
			require.NoError(t, err)
			require.Len(t, log.Events, 4+2, "the kept prefix and its closers (step/end, turn/end)")
			broken, err := os.ReadFile(path + ".broken")
			require.NoError(t, err)
			require.Equal(t, c.tail, string(broken))
			require.Contains(t, logged.String(), "level=WARN")
			require.Contains(t, logged.String(), "file="+path)
			require.Contains(t, logged.String(), "bytes="+formatInt(int64(len(c.tail))))

			// The log is whole now; a later torn tail is appended to the same .broken.
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.WriteString("{torn")
			require.NoError(t, err)
			require.NoError(t, f.Close())
			s2 := openStore(t)
			s2.root = s.root
			_, err = s2.Load(ctx, h.ID)
			require.NoError(t, err)
			broken, err = os.ReadFile(path + ".broken")
			require.NoError(t, err)
			require.Equal(t, c.tail+"{torn", string(broken))
		})
	}
}

// A load with nothing to cut leaves no .broken file.
func TestCleanLoadWritesNoBrokenFile(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	h := header("clean")
	path := writeRaw(t, s, h, headerLineOf(t, h)+lines(openTurnLines...))
	_, err := s.Load(ctx, h.ID)
	require.NoError(t, err)
	_, err = os.Stat(path + ".broken")
	require.ErrorIs(t, err, os.ErrNotExist, "closing an open turn cuts nothing")
}
