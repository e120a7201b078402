package descriptor

import (
	"encoding/json"
	"testing"

	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/fault"
	"github.com/stretchr/testify/require"
)

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestSnapshotOmitsAbsentFields(t *testing.T) {
	d, err := Snapshot(Data{Provider: "spawn", Label: "summarize the doc"})
	require.NoError(t, err)
	require.JSONEq(t, `{"version":1,"provider":"spawn","label":"summarize the doc"}`, marshal(t, d))
	require.Equal(t, `{"version":1,"provider":"spawn","label":"summarize the doc"}`, marshal(t, d))
}

func TestSnapshotWritesKeysInTheOriginalOrderAndRoundTrips(t *testing.T) {
	d, err := Snapshot(Data{
		Provider: "spawn", Label: "l", AgentProvider: "ap", AgentModel: "am", Persona: "p",
		ToolFilter: &event.ToolFilter{Allow: []string{"read"}, Deny: []string{}},
	})
	require.NoError(t, err)
	raw := marshal(t, d)
	require.Equal(t, `{"version":1,"provider":"spawn","label":"l","agentProvider":"ap",`+
		`"agentModel":"am","persona":"p","toolFilter":{"allow":["read"],"deny":[]}}`, raw)
	back, err := Parse(json.RawMessage(raw))
	require.NoError(t, err)
	require.Equal(t, d, back)
}

func TestSnapshotWritesTheCurrentVersionWhateverItIsGiven(t *testing.T) {
	d, err := Snapshot(Data{Version: 7, Provider: "spawn", Label: "l"})
	require.NoError(t, err)
	require.Equal(t, version, d.Version)
}

func TestSnapshotAcceptsAllowOnlyOrDenyOnly(t *testing.T) {
	for _, tf := range []*event.ToolFilter{{Allow: []string{"a"}}, {Deny: []string{"d"}}} {
		d, err := Snapshot(Data{Provider: "spawn", Label: "l", ToolFilter: tf})
		require.NoError(t, err)
		back, err := Parse(json.RawMessage(marshal(t, d)))
		require.NoError(t, err)
		require.Equal(t, d, back)
	}
}

func TestSnapshotDetachesItsInput(t *testing.T) {
	tf := &event.ToolFilter{Allow: []string{"read"}, Deny: []string{"write"}}
	d, err := Snapshot(Data{Provider: "spawn", Label: "l", ToolFilter: tf})
	require.NoError(t, err)
	tf.Allow[0], tf.Deny[0] = "changed", "changed"
	tf.Allow = append(tf.Allow, "more")
	require.Equal(t, &event.ToolFilter{Allow: []string{"read"}, Deny: []string{"write"}}, d.ToolFilter)
}

func TestSnapshotRejectsInvalidInput(t *testing.T) {
	cases := map[string]struct {
		in  Data
		msg string
	}{
		"missing provider": {Data{Label: "l"}, "subagent descriptor provider is required"},
		"missing label":    {Data{Provider: "spawn"}, "subagent descriptor label is required"},
		"empty tool filter": {Data{Provider: "spawn", Label: "l", ToolFilter: &event.ToolFilter{}},
			"subagent descriptor toolFilter must declare allow and/or deny"},
		"invalid utf-8": {Data{Provider: "spawn", Label: "l", ToolFilter: &event.ToolFilter{Deny: []string{"\xff"}}},
			"subagent descriptor is not losslessly JSON-serializable"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Snapshot(tc.in)
			require.ErrorIs(t, err, fault.DescriptorInvalid)
			require.EqualError(t, err, tc.msg)
		})
	}
}

func TestParseReportsOtherVersionsAsUnsupported(t *testing.T) {
	for _, version := range []string{"2", "0", "999", "-1", "1.5", "1e400"} {
		_, err := Parse(json.RawMessage(`{"version":` + version + `,"provider":"spawn","label":"l","mode":"x"}`))
		require.ErrorIs(t, err, fault.DescriptorUnsupported, version)
		require.NotErrorIs(t, err, fault.DescriptorCorrupt, version)
		require.EqualError(t, err, "persisted subagent descriptor version "+version+" is not supported")
	}
}

func TestParseAcceptsNumericSpellingsOfOne(t *testing.T) {
	for _, version := range []string{"1", "1.0", "1e0", "10e-1"} {
		d, err := Parse(json.RawMessage(`{"version":` + version + `,"provider":"spawn","label":"l"}`))
		require.NoError(t, err, version)
		require.Equal(t, Data{Version: 1, Provider: "spawn", Label: "l"}, d)
	}
}

// The 18 rows of the S1 catalogue "rejects a malformed persisted descriptor".
func TestParseRejectsMalformedPersistedDescriptor(t *testing.T) {
	const valid = `"version":1,"provider":"spawn","label":"l"`
	cases := []struct {
		name, payload, message string
	}{
		{"string payload", `"invalid"`, "payload must be an object"},
		{"null payload", `null`, "payload must be an object"},
		{"array payload", `[]`, "payload must be an object"},
		{"missing version", `{"provider":"spawn"}`, "version must be a number"},
		{"string version", `{"version":"1","provider":"spawn","label":"l"}`, "version must be a number"},
		{"unknown payload field", `{"version":1,"provider":"spawn","extra":true}`, `payload has unknown field "extra"`},
		{"missing provider", `{"version":1,"label":"l"}`, "provider must be a string"},
		{"missing label", `{"version":1,"provider":"spawn"}`, "label must be a string"},
		{"invalid label", `{"version":1,"provider":"spawn","label":7}`, "label must be a string"},
		{"invalid provider", `{"version":1,"provider":7,"label":"l"}`, "provider must be a string"},
		{"invalid agent provider", `{` + valid + `,"agentProvider":7}`, "agentProvider must be a string"},
		{"invalid agent model", `{` + valid + `,"agentModel":[]}`, "agentModel must be a string"},
		{"invalid persona", `{` + valid + `,"persona":{}}`, "persona must be a string"},
		{"non-object tool filter", `{` + valid + `,"toolFilter":[]}`, "toolFilter must be an object"},
		{"unknown tool-filter field", `{` + valid + `,"toolFilter":{"except":["x"]}}`, `toolFilter has unknown field "except"`},
		{"empty tool filter", `{` + valid + `,"toolFilter":{}}`, "toolFilter must declare allow and/or deny"},
		{"non-array allow list", `{` + valid + `,"toolFilter":{"allow":"read"}}`, "toolFilter.allow must be an array of strings"},
		{"non-string deny item", `{` + valid + `,"toolFilter":{"deny":[7]}}`, "toolFilter.deny must be an array of strings"},
	}
	require.Len(t, cases, 18)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(json.RawMessage(tc.payload))
			require.ErrorIs(t, err, fault.DescriptorCorrupt)
			require.NotErrorIs(t, err, fault.DescriptorUnsupported)
			require.EqualError(t, err, "persisted subagent descriptor "+tc.message)
		})
	}
}

func TestParseTreatsExplicitNullOptionalsAsPresent(t *testing.T) {
	_, err := Parse(json.RawMessage(`{"version":1,"provider":"spawn","label":"l","persona":null}`))
	require.EqualError(t, err, "persisted subagent descriptor persona must be a string")
	_, err = Parse(json.RawMessage(`{"version":1,"provider":"spawn","label":"l","toolFilter":null}`))
	require.EqualError(t, err, "persisted subagent descriptor toolFilter must be an object")
}

func TestParseNamesTheFirstUnknownKeyInJavaScriptOrder(t *testing.T) {
	_, err := Parse(json.RawMessage(`{"version":1,"zz":1,"yy":2,"7":3,"3":4}`))
	require.EqualError(t, err, `persisted subagent descriptor payload has unknown field "3"`)
	_, err = Parse(json.RawMessage(`{"version":1,"zz":1,"yy":2,"07":3}`))
	require.EqualError(t, err, `persisted subagent descriptor payload has unknown field "zz"`)
}

func TestParseRejectsInvalidJSONAsCorrupt(t *testing.T) {
	for _, raw := range []string{``, `{`, `{"version":1,}`, `{"version":1} x`} {
		_, err := Parse(json.RawMessage(raw))
		require.ErrorIs(t, err, fault.DescriptorCorrupt, raw)
	}
}
