package llm_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// FuzzReadStream feeds arbitrary bytes to the SSE reader and translator:
// they never panic, every failure is an *llm.Error, and a stream that
// finishes is well formed: blocks open with consecutive indexes, each is
// closed once after every delta, and finish comes last.
func FuzzReadStream(f *testing.F) {
	seeds := [][]byte{
		streamBody(llmtest.Say("Hel", "lo")),
		streamBody(llmtest.Response{Reasoning: []string{"r"}, Calls: []llmtest.Call{{ID: "c", Name: "n", Args: []string{"{", "}"}}}}),
		streamBody(llmtest.Response{Finish: "content_filter"}),
		[]byte("\uFEFFdata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\ndata: [DONE]\r\r"),
		[]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":1}}]}}]}\n\ndata: [DONE]\n\n"),
		[]byte(": c\nevent: x\ndata\ndata:\n\n"),
		[]byte("data: {\"choices\":5}\n\n"),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var chunks []vocab.Chunk
		for c, err := range llm.ReadStream(bytes.NewReader(body)) {
			if err != nil {
				_, ok := llm.FailureOf(err)
				require.True(t, ok, "%v", err)
				return
			}
			chunks = append(chunks, c)
		}
		checkWellFormed(t, chunks)
	})
}

func checkWellFormed(t *testing.T, chunks []vocab.Chunk) {
	require.NotEmpty(t, chunks)
	require.Equal(t, vocab.ChunkFinish, chunks[len(chunks)-1].Type)
	opened, closed := 0, 0
	for _, c := range chunks[:len(chunks)-1] {
		switch c.Type {
		case vocab.ChunkBlockStart:
			require.Equal(t, opened, c.Index)
			require.Zero(t, closed, "a block opened after the first block-end")
			opened++
		case vocab.ChunkBlockEnd:
			require.Equal(t, closed, c.Index)
			closed++
		case vocab.ChunkFinish:
			t.Fatal("finish before the end")
		case vocab.ChunkUsage:
		default:
			require.Less(t, c.Index, opened)
			require.Zero(t, closed, "a delta after a block-end")
		}
		_, err := c.MarshalJSON()
		require.NoError(t, err)
	}
	require.Equal(t, opened, closed)
}
