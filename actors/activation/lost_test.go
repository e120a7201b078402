package activation

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/sessionfs"
	"github.com/dsh-actors/dsh-actors/internal/testkit"
	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

// lostLines returns the message ids named by the "accepted message lost"
// error lines of a JSON log.
func lostLines(t *testing.T, logs string) []string {
	t.Helper()
	var ids []string
	lines := bufio.NewScanner(strings.NewReader(logs))
	for lines.Scan() {
		var line struct {
			Level, Msg, Agent, MessageID string
		}
		require.NoError(t, json.Unmarshal(lines.Bytes(), &line))
		if line.Msg == LostMessage {
			require.Equal(t, "ERROR", line.Level)
			require.Equal(t, "agent-1", line.Agent)
			ids = append(ids, line.MessageID)
		}
	}
	return ids
}

// Every message accepted while the disk is full is reported: a discard
// when it was still queued when the log failed, else one error line
// naming it; none reaches the log, and none is reported twice.
func TestMessagesLostToAFullDiskAreReportedOneByOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testkit.SyncBuffer
		var mu sync.Mutex
		var discarded []string
		faults := sessionfs.NewFaultFS(nil)
		store, err := session.OpenJSONL(t.TempDir(), session.WithFS(faults))
		require.NoError(t, err)
		reg := session.NewSessions(store)
		live, err := reg.Create(bg, session.Header{ID: "agent-1", Cwd: "/work"}, nil)
		require.NoError(t, err)
		t.Cleanup(func() {
			require.ErrorIs(t, reg.Release(bg, live), session.ErrLogFailed)
			require.NoError(t, store.Close())
		})
		a := startOn(t, live, agent.Scripted(agent.Options{}), nil, func(c *Config) {
			c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
			c.Observer = func(e inbox.Event) {
				if e.Type == inbox.Discard {
					mu.Lock()
					discarded = append(discarded, e.MessageID)
					mu.Unlock()
				}
			}
		})
		followup(t, a, "reply kept")
		require.NoError(t, a.WhenIdle(bg))
		_, err = reg.Flush(bg, live)
		require.NoError(t, err)

		faults.SetFull(true)
		lost := []string{followup(t, a, "reply lost"), followup(t, a, "reply queued"), followup(t, a, "reply queued too")}
		require.NoError(t, a.WhenIdle(bg))
		_, err = reg.Flush(bg, live)
		require.ErrorIs(t, err, session.ErrLogFailed)
		lost = append(lost, followup(t, a, "reply after"))
		require.NoError(t, a.WhenIdle(bg))

		mu.Lock()
		reported := append(lostLines(t, logs.String()), discarded...)
		mu.Unlock()
		require.ElementsMatch(t, lost, reported, "each lost message reported once")
		require.Contains(t, lostLines(t, logs.String()), lost[0], "the claimed message has an error line")
		require.Contains(t, lostLines(t, logs.String()), lost[3], "so has one accepted after the failure")
		stored, err := store.Inspect(bg, "agent-1")
		require.NoError(t, err)
		for _, e := range stored.Events {
			for _, id := range lost {
				require.NotContains(t, string(e.Data), id)
			}
		}
	})
}
