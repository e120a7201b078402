package modelagent

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/vocab"
)

// sameHeader holds only for headers that encode alike, so a step that
// skips encoding an unchanged header never misses a header/change; and it
// holds for a header rebuilt with the same values, so the skip happens.
func TestSameHeaderOnlyForHeadersThatEncodeAlike(t *testing.T) {
	base := func() vocab.Header {
		return vocab.Header{
			Config:          vocab.Config{Provider: "p", Model: "m", ReasoningEffort: "high", MaxTokens: 10},
			AdapterDefaults: &vocab.AdapterDefaults{ReasoningEffort: true},
			System:          "s",
			Tools:           []vocab.ToolSpec{{Name: "a", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}},
		}
	}
	variants := []func(*vocab.Header){
		func(h *vocab.Header) {},
		func(h *vocab.Header) { h.Config.Provider = "q" },
		func(h *vocab.Header) { h.Config.Model = "n" },
		func(h *vocab.Header) { h.Config.ReasoningEffort = "" },
		func(h *vocab.Header) { h.Config.MaxTokens = 11 },
		func(h *vocab.Header) { h.AdapterDefaults = nil },
		func(h *vocab.Header) { h.AdapterDefaults = &vocab.AdapterDefaults{MaxTokens: true} },
		func(h *vocab.Header) { h.System = "t" },
		func(h *vocab.Header) { h.Tools = nil },
		func(h *vocab.Header) { h.Tools = append(h.Tools, h.Tools[0]) },
		func(h *vocab.Header) { h.Tools[0].Name = "b" },
		func(h *vocab.Header) { h.Tools[0].Description = "e" },
		func(h *vocab.Header) { h.Tools[0].Parameters = json.RawMessage(`{"type":"string"}`) },
	}
	headers := make([]vocab.Header, len(variants))
	for i, change := range variants {
		headers[i] = base()
		change(&headers[i])
	}
	for i, a := range headers {
		for j, b := range headers {
			ja, err := json.Marshal(a)
			require.NoError(t, err)
			jb, err := json.Marshal(b)
			require.NoError(t, err)
			require.Equal(t, string(ja) == string(jb), sameHeader(a, b), "variants %d and %d", i, j)
		}
	}
	require.True(t, sameHeader(base(), base()), "a header rebuilt alike is the same")
}

// sameHeader compares every field: a field added to the header (or to the
// types in it) must be compared there too.
func TestSameHeaderKnowsEveryField(t *testing.T) {
	for typ, fields := range map[reflect.Type]int{
		reflect.TypeFor[vocab.Header]():          4,
		reflect.TypeFor[vocab.Config]():          4,
		reflect.TypeFor[vocab.AdapterDefaults](): 2,
		reflect.TypeFor[vocab.ToolSpec]():        3,
	} {
		require.Equal(t, fields, typ.NumField(), "%s has a field sameHeader does not compare", typ)
	}
}
