package index

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
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
	Reason    json.RawMessage `json:"reason"` // turn/end
	Error     *struct {       // tool/result: the failed tool's error
		Name string `json:"name"`
		Code string `json:"code"`
	} `json:"error"`
	Todos []struct { // todo/write
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"todos"`
}

// typeTodoWrite is the original's todo list event, which this runtime
// reads but never writes.
const typeTodoWrite = "todo/write"

type looseBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Content   json.RawMessage `json:"content"`
}

// searchText is the text of one event that search matches, as the
// original extracts it: the visible text of messages (text blocks,
// tool-call names and arguments, tool results; never reasoning), then a
// failed tool's error name and code; a tool call's name and arguments;
// each todo's status and content; a turn's end (turnEndTexts). Other
// events have none ("").
func searchText(e session.Event) string {
	var m looseMessage
	if !hasText(e.Type) || json.Unmarshal(e.Data, &m) != nil {
		return ""
	}
	return messageText(e.Type, &m)
}

// hasText reports whether events of type typ may have search text (or a
// title): the others' data is not decoded.
func hasText(typ string) bool {
	switch typ {
	case vocab.TypeUserMessage, vocab.TypeAssistantMessage, vocab.TypeSteeringMessage, vocab.TypeToolResult,
		vocab.TypeToolCall, typeTodoWrite, vocab.TypeTurnEnd:
		return true
	}
	return false
}

// messageText is searchText of an event of type typ whose data decoded
// as m.
func messageText(typ string, m *looseMessage) string {
	var parts []string
	switch typ {
	case vocab.TypeUserMessage, vocab.TypeAssistantMessage, vocab.TypeSteeringMessage, vocab.TypeToolResult:
		blocks := m.Content
		if m.Message != nil {
			blocks = m.Message.Content
		}
		parts = blockTexts(parts, blocks)
		if typ == vocab.TypeToolResult && m.Error != nil {
			parts = append(parts, m.Error.Name, m.Error.Code)
		}
	case vocab.TypeToolCall:
		parts = append(parts, m.Name, argumentsText(m.Arguments))
	case typeTodoWrite:
		for _, todo := range m.Todos {
			parts = append(parts, todo.Status, todo.Content)
		}
	case vocab.TypeTurnEnd:
		parts = turnEndTexts(parts, m.Reason)
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

// turnEndTexts is the text of a turn/end reason: "error" with the
// failure's message and code (later versions' {error} shape: its message
// only); the kind of an aborted, disposed, max-tokens or interrupted turn;
// nothing for any other kind.
func turnEndTexts(parts []string, raw json.RawMessage) []string {
	var r vocab.Reason
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil {
		return parts
	}
	switch r.Kind {
	case vocab.ReasonError:
		if r.Error != nil {
			return append(parts, "error", r.Error.Message)
		}
		return append(parts, "error", r.Text(), r.ErrorCode())
	case vocab.ReasonAborted, vocab.ReasonDisposed, vocab.ReasonMaxTokens, vocab.ReasonInterrupted:
		return append(parts, r.Kind)
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
	if e.Type != vocab.TypeUserMessage {
		return "", false
	}
	var m looseMessage
	if json.Unmarshal(e.Data, &m) != nil {
		return "", false
	}
	return messageTitle(&m)
}

// eventFacts is searchText and TitleOf of e, decoding its data once.
func eventFacts(e session.Event) (text, title string, titled bool) {
	var m looseMessage
	if !hasText(e.Type) || json.Unmarshal(e.Data, &m) != nil {
		return "", "", false
	}
	if e.Type == vocab.TypeUserMessage {
		title, titled = messageTitle(&m)
	}
	return messageText(e.Type, &m), title, titled
}

// messageTitle is TitleOf a user message whose data decoded as m.
func messageTitle(m *looseMessage) (string, bool) {
	for _, b := range m.Content {
		if b.Type == event.BlockText && strings.TrimSpace(b.Text) != "" {
			line, _, _ := strings.Cut(strings.TrimSpace(b.Text), "\n")
			return firstRunes(line, maxTitleRunes), true
		}
	}
	return "", false
}

// firstRunes is s cut to its first n code points, as
// string([]rune(s)[:n]) cuts it (an invalid byte counts as one and becomes
// U+FFFD).
func firstRunes(s string, n int) string {
	end, count := 0, 0
	for end < len(s) && count < n {
		r, size := utf8.DecodeRuneInString(s[end:])
		if r == utf8.RuneError && size == 1 {
			return string([]rune(s)[:min(utf8.RuneCountInString(s), n)])
		}
		end += size
		count++
	}
	return s[:end]
}
