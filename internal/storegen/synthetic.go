package storegen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// WriteSynthetic writes each log straight to its path under root, in the
// exact bytes the JSONL store writes (the events checked as Append checks
// them), for benchmarks and tests that need large stores quickly (e.g.
// 10k sessions of 50 events). It skips the temporary file, the hard link
// and every fsync, so it is fast and NOT crash-safe, and it overwrites an
// existing log. Folders get mode 0700, files 0600. Events must have
// Seq == index. It blocks until every file is written.
func WriteSynthetic(root string, logs ...session.Log) error {
	var buf []byte
	for _, log := range logs {
		path, err := logpath.Path(root, log.Header.Cwd, log.Header.ID)
		if err != nil {
			return err
		}
		if buf, err = appendLog(buf[:0], log); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, buf, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// appendLog appends log's lines, each ending in LF, to buf.
func appendLog(buf []byte, log session.Log) ([]byte, error) {
	header, err := log.Header.MarshalJSON()
	if err != nil {
		return nil, err
	}
	lines, err := session.EventLines(log.Header.ID, 0, log.Events)
	if err != nil {
		return nil, err
	}
	buf = append(append(buf, header...), '\n')
	for _, line := range lines {
		buf = append(append(buf, line...), '\n')
	}
	return buf, nil
}

// ContinuableChild is a settled continuable child id of parentID, made by
// the spawn provider with the label "bench", whose log has about n events:
// its descriptor, session/end-seed, then completed scripted turns of six
// events (turn/start, the user message, step/start, the assistant reply,
// step/end, turn/end).
func ContinuableChild(id, parentID string, n int) session.Log {
	data, _ := json.Marshal(descriptor.Data{Version: descriptor.Version, Provider: "spawn", Label: "bench"})
	events := []session.Event{
		{Type: vocab.TypeSubagentDescriptor, Data: data},
		{Type: vocab.TypeSessionEndSeed, Data: json.RawMessage(`{}`)},
	}
	for turn := 1; len(events) < n; turn++ {
		events = append(events, scriptedTurn(turn)...)
	}
	for i := range events {
		events[i].Seq, events[i].Time = int64(i), 1_700_000_000_000
	}
	return session.Log{Header: session.Header{ID: id, CreatedAt: 1_700_000_000_000, ParentSession: parentID,
		Origin: "subagent", DelegationDepth: 1}, Events: events}
}

// scriptedTurn is the six events of completed scripted turn number turn
// replying "ok" to "work".
func scriptedTurn(turn int) []session.Event {
	user, _ := json.Marshal(event.UserMessage{Content: event.Text("work"), Source: event.Source{Kind: "user"}, Role: "user", ID: fmt.Sprintf("m%d", turn)})
	reply := fmt.Sprintf(`{"turn":%d,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"scripted","model":"scripted"},"id":"a%d"}}`, turn, turn)
	mark := json.RawMessage(fmt.Sprintf(`{"turn":%d,"step":1}`, turn))
	return []session.Event{
		{Type: vocab.TypeTurnStart, Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message","source":{"kind":"user"}}}`, turn))},
		{Type: vocab.TypeUserMessage, Data: user, SurfaceOp: json.RawMessage(`"append"`)},
		{Type: vocab.TypeStepStart, Data: mark},
		{Type: vocab.TypeAssistantMessage, Data: json.RawMessage(reply), SurfaceOp: json.RawMessage(`"append"`)},
		{Type: vocab.TypeStepEnd, Data: mark},
		{Type: vocab.TypeTurnEnd, Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))},
	}
}
