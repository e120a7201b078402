package jsjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stringify is JSON.stringify(JSON.parse(text)).
func stringify(t testing.TB, text string) string {
	t.Helper()
	v, err := Parse([]byte(text))
	require.NoError(t, err, text)
	return string(v.Append(nil))
}

// The expectations are what node 20 prints for
// JSON.stringify(JSON.parse(input)).
func TestStringifyOfParseMatchesJavaScript(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"b\":1,\"a\":2}", "{\"b\":1,\"a\":2}"},
		{"{\"b\":1,\"2\":2,\"10\":3,\"1\":4,\"a\":5,\"01\":6,\"4294967295\":7,\"4294967294\":8}", "{\"1\":4,\"2\":2,\"10\":3,\"4294967294\":8,\"b\":1,\"a\":5,\"01\":6,\"4294967295\":7}"},
		{"{\"a\":1,\"b\":2,\"a\":3}", "{\"a\":3,\"b\":2}"},
		{"[1.50, 1e2, 1E21, 1e-7, 0.000001, 123456789012345678901, -0, -0.0, 1e400, -1e400, 1e-400, 5e-324, 0.1, 1.7976931348623157e308, 100, 1e20, 1.5e-6, 123e-20]", "[1.5,100,1e+21,1e-7,0.000001,123456789012345680000,0,0,null,null,0,5e-324,0.1,1.7976931348623157e+308,100,100000000000000000000,0.0000015,1.23e-18]"},
		{"\"a\\u2028b\\u2029c\\u007f\\u0001\\u001f\\b\\f\\n\\r\\t\\/\\\"\\\\\"", "\"a b c\\u0001\\u001f\\b\\f\\n\\r\\t/\\\"\\\\\""},
		{"  {\"x\" : [ true , false , null , { } , [ ] ] }  ", "{\"x\":[true,false,null,{},[]]}"},
		{"\"\\u00e9\\ud83d\\ude00\"", "\"é😀\""},
		{"{\"__proto__\":{\"x\":1},\"y\":2}", "{\"__proto__\":{\"x\":1},\"y\":2}"},
		{"[0.1,0.2,0.30000000000000004,2.5e-7,25e20,1e21,999999999999999999999]", "[0.1,0.2,0.30000000000000004,2.5e-7,2.5e+21,1e+21,1e+21]"},
	} {
		require.Equal(t, tc.want, stringify(t, tc.in), tc.in)
	}
}

func TestParseRefusesWhatJSONParseRefuses(t *testing.T) {
	for _, text := range []string{"", "[1,]", "{\"a\":1,}", "{a:1}", "[1] 2", "'x'", "01", "NaN", "[", "\"\\x\""} {
		_, err := Parse([]byte(text))
		require.Error(t, err, text)
	}
}

func TestObjectsSetInJavaScriptOrder(t *testing.T) {
	o := NewObj()
	o.Set("type", Value{kind: String, str: "image"})
	o.Set("data", Value{kind: String, str: "zz"})
	o.Set("7", Value{kind: Bool, b: true})
	o.Set("type", Value{kind: String, str: "video"})
	require.Equal(t, []string{"7", "type", "data"}, o.Keys())
	require.Equal(t, `{"7":true,"type":"video","data":"zz"}`, string(ObjectValue(o).Append(nil)))
}

// FuzzStringify: whatever Parse accepts, Append writes valid JSON that
// Parse reads back to the same bytes, and Parse accepts exactly what
// encoding/json calls valid.
func FuzzStringify(f *testing.F) {
	for _, seed := range []string{`{"b":1,"2":2,"a":[1.5e300,-0,"\u2028"]}`, `[1e400]`, `"\ud800"`, `{"a":1,"a":{"a":2}}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := Parse([]byte(text))
		require.Equal(t, json.Valid([]byte(text)), err == nil, "Parse and json.Valid disagree on %q", text)
		if err != nil {
			return
		}
		out := v.Append(nil)
		require.True(t, json.Valid(out), "%q wrote %q", text, out)
		again, err := Parse(out)
		require.NoError(t, err)
		require.Equal(t, string(out), string(again.Append(nil)))
	})
}

// Marshal writes a struct's keys in field order, no HTML escaping, no
// trailing newline, and U+2028/U+2029 raw, as JSON.stringify does; a
// backslash before the text "u2028" stays an escaped backslash.
func TestMarshalIsStringifyOfAStruct(t *testing.T) {
	got, err := Marshal(struct {
		B string   `json:"b"`
		A int      `json:"a"`
		K []string `json:"k"`
	}{B: "<a> & \u2028\u2029", A: 1, K: []string{`\u2028`, `\\u2029`, "\x01\\"}})
	require.NoError(t, err)
	require.Equal(t, "{\"b\":\"<a> & \u2028\u2029\",\"a\":1,\"k\":[\"\\\\u2028\",\"\\\\\\\\u2029\",\"\\u0001\\\\\"]}", string(got))
	var back struct{ K []string }
	require.NoError(t, json.Unmarshal(got, &back))
	require.Equal(t, []string{`\u2028`, `\\u2029`, "\x01\\"}, back.K)
	_, err = Marshal(func() {})
	require.Error(t, err)
}

// FuzzMarshalLineSeparators checks that Marshal's rewrite of U+2028/U+2029
// keeps every string: it reads back as written, and no escape of the two
// characters is left.
func FuzzMarshalLineSeparators(f *testing.F) {
	for _, seed := range []string{"\u2028", `\u2028`, `\\u2029\`, "a\\\u2029\\u2028", `\`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Marshal(s)
		require.NoError(t, err)
		var back string
		require.NoError(t, json.Unmarshal(out, &back))
		want, _ := json.Marshal(s) // encoding/json's own reading of s (invalid UTF-8 becomes U+FFFD)
		var wantBack string
		require.NoError(t, json.Unmarshal(want, &wantBack))
		require.Equal(t, wantBack, back)
		require.NotContains(t, strings.ReplaceAll(string(out), `\\`, ""), `\u202`)
	})
}
