package activation

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/dsh-actors/dsh-actors/inbox"
	"github.com/dsh-actors/dsh-actors/internal/faultfs"
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

// Every message accepted before the disk filled up and lost to it is
// named by one error line with its id and the reason (a queued one is
// discarded too), none reaches the log, none is reported twice; once the
// log has failed a follow-up is refused at once (DURABILITY_FAILED,
// wrapping ENOSPC) and nothing more is accepted.
func TestMessagesLostToAFullDiskAreReportedOneByOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testkit.SyncBuffer
		var mu sync.Mutex
		var discarded []string
		faults := faultfs.New(nil)
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
		lost := []string{followup(t, a, "reply lost")}
		for _, text := range []string{"reply queued", "reply queued too"} {
			// The first turn's failing write may land before this
			// admission: then it is refused, never accepted and lost.
			id, err := a.Followup(bg, event.UserMessage{Content: event.Text(text), Source: event.Source{Kind: "user"}})
			if err != nil {
				require.ErrorIs(t, err, fault.DurabilityFailed, "a follow-up after the failed write is refused")
				continue
			}
			lost = append(lost, id)
		}
		require.NoError(t, a.WhenIdle(bg))
		_, err = reg.Flush(bg, live)
		require.ErrorIs(t, err, session.ErrLogFailed)

		_, err = a.Followup(bg, event.UserMessage{Content: event.Text("reply after"), Source: event.Source{Kind: "user"}})
		require.ErrorIs(t, err, fault.DurabilityFailed, "refused once the log failed")
		require.ErrorIs(t, err, syscall.ENOSPC, "naming the full disk")
		require.NoError(t, a.WhenIdle(bg))

		reasons := lostReasons(t, logs.String())
		mu.Lock()
		require.Subset(t, lost, discarded, "a discard is of a lost message")
		mu.Unlock()
		require.ElementsMatch(t, lost, slices.Collect(maps.Keys(reasons)), "each lost message has one error line")
		for id, reason := range reasons {
			require.Contains(t, reason, "no space left on device", id)
		}
		stored, err := store.Inspect(bg, "agent-1")
		require.NoError(t, err)
		for _, e := range stored.Events {
			for _, id := range lost {
				require.NotContains(t, string(e.Data), id)
			}
		}
	})
}

// lostReasons maps the message id of each "accepted message lost" error
// line of a JSON log to its err, failing on an id named twice.
func lostReasons(t *testing.T, logs string) map[string]string {
	t.Helper()
	reasons := map[string]string{}
	lines := bufio.NewScanner(strings.NewReader(logs))
	for lines.Scan() {
		var line struct{ Msg, MessageID, Err string }
		require.NoError(t, json.Unmarshal(lines.Bytes(), &line))
		if line.Msg == LostMessage {
			require.NotContains(t, reasons, line.MessageID, "reported twice")
			reasons[line.MessageID] = line.Err
		}
	}
	return reasons
}
