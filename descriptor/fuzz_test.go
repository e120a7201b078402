package descriptor

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dsh-actors/dsh-actors/fault"
)

// FuzzParse checks that Parse never panics, that every failure is exactly
// one of the two persisted kinds with the fixed prefix, and that a parsed
// record written back parses to itself.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"provider":"spawn","label":"l"}`,
		`{"version":1,"provider":"p","label":"l","persona":"x","toolFilter":{"allow":[],"deny":["a"]}}`,
		`{"version":2}`, `null`, `[]`, `"s"`, `{"version":"1"}`, `{"7":1,"version":1}`, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := Parse(raw)
		if err != nil {
			checkParseError(t, err)
			return
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("marshal %+v: %v", d, err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("reparse %s: %v", out, err)
		}
		if string(mustMarshal(t, again)) != string(out) {
			t.Fatalf("round trip changed %s", out)
		}
	})
}

func checkParseError(t *testing.T, err error) {
	corrupt, unsupported := errors.Is(err, fault.DescriptorCorrupt), errors.Is(err, fault.DescriptorUnsupported)
	if corrupt == unsupported {
		t.Fatalf("error %v is not exactly one kind", err)
	}
	if !strings.HasPrefix(err.Error(), "persisted subagent descriptor ") {
		t.Fatalf("error %q lacks the prefix", err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
