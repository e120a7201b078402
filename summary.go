package dsh

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsh-actors/dsh-actors/descriptor"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// Summary describes e for a person reading a transcript, uncut. For a
// message, a tool result (headed "error: " when the tool failed) or any
// other payload with content blocks it is their text, and text is true (a
// tool call block reads "[tool-call NAME ARGUMENTS]"); for a tool call, its
// name and arguments; for a turn's start "turn N" ("turn N (retry)"), for
// its end "turn N KIND" and, for a failed turn, ": MESSAGE (CODE)"; for a
// subagent descriptor its provider and label, or why it does not parse;
// for anything else the payload's JSON. It does not block.
func (e Event) Summary() (summary string, text bool) {
	switch e.Type {
	case vocab.TypeSubagentDescriptor:
		return descriptorSummary(e.Data), false
	case vocab.TypeTurnStart, vocab.TypeTurnEnd:
		return turnSummary(e), false
	case vocab.TypeToolCall:
		if call, err := vocab.DecodeAs[vocab.ToolCall](e.Type, e.Data); err == nil {
			return call.Name + " " + call.Arguments, false
		}
	case vocab.TypeToolResult:
		if text, ok := toolResultText(e); ok {
			return text, true
		}
	}
	if text, ok := messageText(e.Data); ok {
		return text, true
	}
	return string(e.Data), false
}

func descriptorSummary(raw json.RawMessage) string {
	d, err := descriptor.Parse(raw)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("provider=%s label=%q", d.Provider, d.Label)
}

// turnSummary is "turn N" for a turn/start ("turn N (retry)" for a retry
// turn's), "turn N KIND" for a turn/end, and for a failed turn ": MESSAGE
// (CODE)".
func turnSummary(e Event) string {
	p, err := vocab.Decode(e.Type, e.Data)
	if err != nil {
		return string(e.Data)
	}
	end, isEnd := p.(vocab.TurnEnd)
	if !isEnd {
		start := p.(vocab.TurnStart)
		if start.Trigger != nil && start.Trigger.Kind == vocab.TriggerRetry {
			return fmt.Sprintf("turn %d (retry)", start.Turn)
		}
		return fmt.Sprintf("turn %d", start.Turn)
	}
	summary := fmt.Sprintf("turn %d %s", end.Turn, end.Reason.Kind)
	if message := end.Reason.Text(); message != "" {
		summary += ": " + message
	}
	if code := end.Reason.ErrorCode(); code != "" {
		summary += " (" + code + ")"
	}
	return summary
}

// toolResultText is the text of a tool result's content, marked when the
// result is an error.
func toolResultText(e Event) (string, bool) {
	r, err := vocab.DecodeAs[vocab.ToolResult](e.Type, e.Data)
	if err != nil || len(r.Message.Content) != 1 {
		return "", false
	}
	block := r.Message.Content[0]
	text := event.TextOf(block.Content)
	if block.IsError {
		text = "error: " + text
	}
	return text, true
}

// messageText joins the text blocks (and a tool call as "[tool-call NAME
// ARGUMENTS]") of a user message ({content}) or of a wrapped message
// ({message:{content}}).
func messageText(raw json.RawMessage) (string, bool) {
	type block struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	var payload struct {
		Content []block `json:"content"`
		Message struct {
			Content []block `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(raw, &payload) != nil {
		return "", false
	}
	var texts []string
	for _, b := range append(payload.Content, payload.Message.Content...) {
		switch b.Type {
		case event.BlockText:
			texts = append(texts, b.Text)
		case event.BlockToolCall:
			texts = append(texts, "[tool-call "+b.Name+" "+b.Arguments+"]")
		}
	}
	return strings.Join(texts, " "), len(texts) > 0
}
