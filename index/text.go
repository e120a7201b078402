package index

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/session"
)

// maxTitleRunes bounds a session title taken from its first user message.
const maxTitleRunes = 80

// looseMessage is the part of a message payload the index reads.
type looseMessage struct {
	Content []looseBlock `json:"content"`
	Message *struct {
		Content []looseBlock `json:"content"`
	} `json:"message"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"reason"`
	Kind    string `json:"kind"`
	Error   any    `json:"error"`
	Failure *struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"failure"`
}

type looseBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Content   json.RawMessage `json:"content"`
}

// searchText is the text of one event that search matches: the visible
// text of messages (text blocks, tool-call names and arguments, tool
// results; never reasoning), a tool call's name and arguments, and a
// turn's failure. Other events have none ("").
func searchText(e session.Event) string {
	var m looseMessage
	if json.Unmarshal(e.Data, &m) != nil {
		return ""
	}
	var parts []string
	switch e.Type {
	case event.TypeUserMessage, event.TypeAssistantMessage, event.TypeSteeringMessage, event.TypeToolResult:
		blocks := m.Content
		if m.Message != nil {
			blocks = m.Message.Content
		}
		parts = blockTexts(parts, blocks)
	case event.TypeToolCall:
		parts = append(parts, m.Name, argumentsText(m.Arguments))
	case event.TypeTurnEnd:
		parts = turnEndTexts(parts, m)
	}
	return joinParts(parts)
}

func blockTexts(parts []string, blocks []looseBlock) []string {
	for _, b := range blocks {
		switch b.Type {
		case event.BlockText:
			parts = append(parts, b.Text)
		case "tool-call":
			parts = append(parts, b.Name, argumentsText(b.Arguments))
		case "tool-result":
			var nested []looseBlock
			var text string
			if json.Unmarshal(b.Content, &nested) == nil {
				parts = blockTexts(parts, nested)
			} else if json.Unmarshal(b.Content, &text) == nil {
				parts = append(parts, text)
			}
		}
	}
	return parts
}

func turnEndTexts(parts []string, m looseMessage) []string {
	if m.Reason != nil {
		parts = append(parts, m.Reason.Message, m.Reason.Code)
		if m.Reason.Kind != "completed" {
			parts = append(parts, m.Reason.Kind)
		}
	}
	if m.Kind != "" && m.Kind != "completed" {
		parts = append(parts, m.Kind)
	}
	if m.Failure != nil {
		parts = append(parts, m.Failure.Message, m.Failure.Code)
	}
	if s, ok := m.Error.(string); ok {
		parts = append(parts, s)
	}
	return parts
}

// argumentsText is a tool call's arguments: the raw string when they are
// a JSON string, else the JSON itself.
func argumentsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func joinParts(parts []string) string {
	var kept []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, sanitize(p))
		}
	}
	return strings.Join(kept, "\n")
}

// sanitize replaces NUL and the two highlight markers with U+FFFD.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 0 || r == markOpen || r == markClose {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

// TitleOf is the title a user message gives the session it opens: the
// first line of its first non-blank text block, at most maxTitleRunes
// runes. ok is false for other events and for messages without text. A
// session's title is that of its first user message that has one.
func TitleOf(e session.Event) (string, bool) {
	if e.Type != event.TypeUserMessage {
		return "", false
	}
	var m looseMessage
	if json.Unmarshal(e.Data, &m) != nil {
		return "", false
	}
	for _, b := range m.Content {
		if b.Type == event.BlockText && strings.TrimSpace(b.Text) != "" {
			line, _, _ := strings.Cut(strings.TrimSpace(b.Text), "\n")
			runes := []rune(line)
			return string(runes[:min(len(runes), maxTitleRunes)]), true
		}
	}
	return "", false
}
