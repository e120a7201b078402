package host

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The expectations are what JSON.stringify prints for zod 4.4.3's
// z.looseObject({type: z.string()}).parse(JSON.parse(input)).
func TestLooseBlockIsTheOriginalsParse(t *testing.T) {
	for _, tc := range []struct {
		in, want   string
		typ, text  string
		plainBlock bool
	}{
		{`{"data":"zz","type":"image"}`, `{"type":"image","data":"zz"}`, "image", "", false},
		{`{"type":"text","text":"a","extra":{"b":1.50,"a":[1e2]}}`, `{"type":"text","text":"a","extra":{"b":1.5,"a":[100]}}`, "text", "a", false},
		{`{"z":1,"type":"x","type2":2}`, `{"type":"x","z":1,"type2":2}`, "x", "", false},
		{`{"type":"t","__proto__":{"x":1}}`, `{"type":"t"}`, "t", "", false},
		{`{"type":"x","1":2,"b":3,"0":1}`, `{"0":1,"1":2,"type":"x","b":3}`, "x", "", false},
		{`{"text":"a","type":"text"}`, `{"type":"text","text":"a"}`, "text", "a", true},
		{`{"type":"text"}`, `{"type":"text"}`, "text", "", false},
		{`{"type":"text","text":5}`, `{"type":"text","text":5}`, "text", "", false},
		{`{"type":"a","type":"b"}`, `{"type":"b"}`, "b", "", false},
		{` {"type" : "text" , "text" : "a<>&\u2028\u0007"} `, "{\"type\":\"text\",\"text\":\"a<>&\u2028\\u0007\"}", "text", "a<>&\u2028\a", true},
	} {
		b, err := looseBlock([]byte(tc.in))
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.typ, b.Type, tc.in)
		require.Equal(t, tc.text, b.Text, tc.in)
		require.Equal(t, tc.plainBlock, b.Raw == nil, tc.in)
		out, err := b.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, tc.want, string(out), tc.in)
	}
	for _, bad := range []string{`[]`, `"text"`, `{}`, `{"type":1}`, `{"type":null}`, `{"type":"a"`} {
		_, err := looseBlock([]byte(bad))
		require.Error(t, err, bad)
	}
}
