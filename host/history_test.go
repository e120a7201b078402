package host

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/session"
	"github.com/stretchr/testify/require"
)

func seqsOf(events []session.Event) []int64 {
	out := []int64{}
	for _, e := range events {
		out = append(out, e.Seq)
	}
	return out
}

func TestPaginate(t *testing.T) {
	replaced := message(5, "assistant/message", "model-only copy")
	replaced.SurfaceOp = json.RawMessage(`{"op":"replace","target":2}`)
	conversation := []session.Event{
		plain(0, "turn/start"),
		message(1, "user/message", "one"),
		plain(2, "assistant/chunk"),
		plain(3, "assistant/chunk"),
		message(4, "assistant/message", "two", 2, 3),
		replaced,
		plain(6, "tool/call"),
		plain(7, "tool/result"),
		message(8, "steering/message", "three"),
		plain(9, "turn/end"),
		plain(10, "turn/start"),
		message(11, "user/message", "four"),
		plain(12, "assistant/chunk"), // an in-progress partial message rides along
	}
	before := func(n int64) *int64 { return &n }
	cases := []struct {
		name      string
		events    []session.Event
		beforeSeq *int64
		max       int
		want      []int64
		hasMore   bool
	}{
		{"empty log", nil, nil, 50, []int64{}, false},
		{"fewer messages than the page", conversation, nil, 50, seqsOf(conversation), false},
		{"exactly all messages: the leading turn start is one more page", conversation, nil, 4, seqsOf(conversation)[1:], true},
		{"one message: the tail from it", conversation, nil, 1, []int64{11, 12}, true},
		{"a steering message counts", conversation, nil, 2, []int64{8, 9, 10, 11, 12}, true},
		{"a chunked message keeps its chunks", conversation, nil, 3, []int64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, true},
		{"a replace copy does not count", conversation, before(8), 1, []int64{2, 3, 4, 5, 6, 7}, true},
		{"beforeSeq windows the log", conversation, before(4), 50, []int64{0, 1, 2, 3}, false},
		{"beforeSeq 0 is empty", conversation, before(0), 50, []int64{}, false},
		{"only leading non-messages left", conversation, before(1), 50, []int64{0}, false},
		{"cut at the first message still has the turn start", conversation, before(2), 1, []int64{1}, true},
		{"beforeSeq past the end", conversation, before(99), 1, []int64{11, 12}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := paginate(tc.events, tc.beforeSeq, tc.max)
			require.Equal(t, tc.want, seqsOf(p.events))
			require.Equal(t, tc.hasMore, p.hasMore)
		})
	}
}

// TestPaginateWalksBackWithoutGapsOrOverlap pages a long log with the
// client's cursor rule (beforeSeq = first held seq) and gets every event once.
func TestPaginateWalksBackWithoutGapsOrOverlap(t *testing.T) {
	var events []session.Event
	for seq := int64(0); seq < 500; seq++ {
		switch seq % 5 {
		case 1:
			events = append(events, message(seq, "user/message", "u"))
		case 3:
			events = append(events, message(seq, "assistant/message", "a", seq-1))
		default:
			events = append(events, plain(seq, "turn/start"))
		}
	}
	var cursor *int64
	var collected []int64
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100)
		p := paginate(events, cursor, 7)
		require.NotEmpty(t, p.events)
		collected = append(seqsOf(p.events), collected...)
		if !p.hasMore {
			break
		}
		first := p.events[0].Seq
		cursor = &first
	}
	require.Equal(t, seqsOf(events), collected)
}

func FuzzPaginate(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 3}, uint8(2), int16(-1))
	f.Add([]byte{1, 1, 1}, uint8(1), int16(2))
	f.Fuzz(func(t *testing.T, kinds []byte, maxMessages uint8, beforeSeq int16) {
		if maxMessages == 0 {
			return
		}
		var events []session.Event
		for i, k := range kinds {
			seq := int64(i)
			if k%3 == 1 {
				events = append(events, message(seq, "user/message", "x", seq/2))
			} else {
				events = append(events, plain(seq, "turn/start"))
			}
		}
		var cursor *int64
		if beforeSeq >= 0 {
			b := int64(beforeSeq)
			cursor = &b
		}
		p := paginate(events, cursor, int(maxMessages))
		for i := 1; i < len(p.events); i++ {
			require.Equal(t, p.events[i-1].Seq+1, p.events[i].Seq, "a page is one contiguous range")
		}
		if cursor != nil && len(p.events) > 0 {
			require.Less(t, p.events[len(p.events)-1].Seq, *cursor)
		}
		if !p.hasMore && len(p.events) > 0 {
			require.Equal(t, int64(0), p.events[0].Seq)
		}
	})
}
