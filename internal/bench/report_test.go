package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRatio(t *testing.T) {
	cases := []struct {
		name       string
		ours, base Value
		of         RatioOf
		want       float64
		bad        bool
	}{
		{"slowdown", Ns("a", 600), Ns("b", 200), OursOverBase, 3, false},
		{"speedup", Ns("a", 500), Ns("b", 4000), BaseOverOurs, 8, false},
		{"share of a rate", PerSec("a", 30, "events"), PerSec("b", 100, "events"), OursOverBase, 0.3, false},
		{"zero baseline", Ns("a", 1), Ns("b", 0), OursOverBase, 0, true},
		{"negative ours", Ns("a", -1), Ns("b", 1), OursOverBase, 0, true},
		{"NaN", Ns("a", math.NaN()), Ns("b", 1), OursOverBase, 0, true},
		{"infinite", Ns("a", math.Inf(1)), Ns("b", 1), OursOverBase, 0, true},
		{"kinds differ", Ns("a", 1), Bytes("b", 1), OursOverBase, 0, true},
		{"unknown direction", Ns("a", 1), Ns("b", 1), RatioOf("sideways"), 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Ratio(c.ours, c.base, c.of)
			if c.bad {
				require.ErrorIs(t, err, ErrBadRatio)
				return
			}
			require.NoError(t, err)
			require.InDelta(t, c.want, got, 1e-12)
		})
	}
}

func TestCompareStatus(t *testing.T) {
	cases := []struct {
		name       string
		ours, base Value
		of         RatioOf
		target     *Target
		want       Status
	}{
		{"at most, met", Ns("a", 300), Ns("b", 100), OursOverBase, &Target{Op: AtMost, Value: 3}, Met},
		{"at most, missed", Ns("a", 301), Ns("b", 100), OursOverBase, &Target{Op: AtMost, Value: 3}, Missed},
		{"at least, met", Ns("a", 100), Ns("b", 400), BaseOverOurs, &Target{Op: AtLeast, Value: 4}, Met},
		{"at least, missed", Ns("a", 100), Ns("b", 399), BaseOverOurs, &Target{Op: AtLeast, Value: 4}, Missed},
		{"percent", PerSec("a", 29, "events"), PerSec("b", 100, "events"), OursOverBase, &Target{Op: AtLeast, Value: 0.3, Percent: true}, Missed},
		{"on ours, met", Bytes("a", 4096), Bytes("b", 100_000), OursOverBase, &Target{Op: AtMost, Value: 4096, OnOurs: true}, Met},
		{"on ours, missed", Bytes("a", 4097), Bytes("b", 1), OursOverBase, &Target{Op: AtMost, Value: 4096, OnOurs: true}, Missed},
		{"no target", Ns("a", 1), Ns("b", 1), OursOverBase, nil, Info},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Compare("5c", "x", c.ours, c.base, c.of, c.target)
			require.NoError(t, err)
			require.Equal(t, c.want, l.Status)
			require.Equal(t, 5, l.Row)
		})
	}
	_, err := Compare("1a", "broken", Ns("a", 1), Ns("b", 0), OursOverBase, nil)
	require.ErrorIs(t, err, ErrBadRatio)
	require.ErrorContains(t, err, "1a broken")
}

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{FormatNs(0), "0 ns"},
		{FormatNs(812), "812 ns"},
		{FormatNs(999.7), "1.00 µs"},
		{FormatCount(999_600), "1.00M"},
		{FormatNs(4410), "4.41 µs"},
		{FormatNs(13_500_000), "13.5 ms"},
		{FormatNs(2_345_000_000), "2.35 s"},
		{FormatCount(999), "999"},
		{FormatCount(12_340), "12.3k"},
		{FormatCount(1_200_000), "1.20M"},
		{FormatBytes(760), "760 B"},
		{FormatBytes(2304), "2.25 KiB"},
		{FormatBytes(3 << 20), "3.00 MiB"},
		{FormatTimes(2.8), "2.80×"},
		{FormatTimes(0.0856), "0.0856×"},
		{FormatTimes(17258), "17258×"},
		{FormatPercent(0.412), "41.2%"},
		{Ns("x", 6050).String(), "6.05 µs"},
		{NsPer("x", 6050, "event").String(), "6.05 µs/event"},
		{PerSec("x", 184_000, "events").String(), "184k events/s"},
		{PerSec("x", 5, "").String(), "5.00 op/s"},
		{Bytes("x", 934).String(), "934 B"},
		{Target{Op: AtMost, Value: 3}.String(), "≤ 3×"},
		{Target{Op: AtLeast, Value: 0.3, Percent: true}.String(), "≥ 30%"},
		{Target{Op: AtLeast, Value: 0.25, Percent: true}.String(), "≥ 25%"},
		{Target{Op: AtMost, Value: 4096, OnOurs: true}.String(), "ours ≤ 4.00 KiB"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, c.got)
	}
	l, err := Compare("2a", "x", PerSec("a", 41, "events"), PerSec("b", 100, "events"), OursOverBase, &Target{Op: AtLeast, Value: 0.3, Percent: true})
	require.NoError(t, err)
	require.Equal(t, "ours/base 41.0%", l.RatioString())
	require.Equal(t, "≥ 30%", l.TargetString())
	l.Target = nil
	require.Equal(t, "ours/base 41.0%", l.RatioString(), "a rate's share without a target")
	require.Equal(t, "—", l.TargetString())
	l.Target = &Target{Op: AtLeast, Value: 20}
	require.Equal(t, "ours/base 0.41×", l.RatioString())
	l, err = Compare("3a", "x", Ns("a", 41), Ns("b", 100), OursOverBase, nil)
	require.NoError(t, err)
	require.Equal(t, "ours/base 0.41×", l.RatioString())
}

func sampleReport(t *testing.T) Report {
	t.Helper()
	a, err := Compare("1a", "follow-up", Ns("follow-up", 600), Ns("raw chan", 300), OursOverBase, &Target{Op: AtMost, Value: 3})
	require.NoError(t, err)
	a.Note = "medians"
	b, err := Compare("6", "drain", Ns("drain", 500e6), Ns("protoactor", 25e6), OursOverBase, &Target{Op: AtMost, Value: 3})
	require.NoError(t, err)
	c, err := Compare("7a", "list", Ns("list", 90e6), Ns("raw", 20e6), OursOverBase, nil)
	require.NoError(t, err)
	return Report{Env: Env{GoVersion: "go1.x", GOMAXPROCS: 2, NumCPU: 2, Dir: "/tmp/x", Elapsed: "1s"}, Lines: []Line{a, b, c}}
}

func TestWriteTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, sampleReport(t).WriteTable(&out))
	text := out.String()
	require.Contains(t, text, "row  measurement")
	require.Regexp(t, `(?m)^1a\s+follow-up\s+600 ns\s+raw chan 300 ns\s+ours/base 2\.00×\s+≤ 3×\s+met$`, text)
	require.Regexp(t, `(?m)^6\s+drain\s+500 ms\s+protoactor 25\.0 ms\s+ours/base 20\.0×\s+≤ 3×\s+missed$`, text)
	require.Regexp(t, `(?m)^7a\s+list\s+90\.0 ms\s+raw 20\.0 ms\s+ours/base 4\.50×\s+—\s+info$`, text)
	require.Contains(t, text, "[1a] medians\n")
	require.True(t, strings.HasSuffix(text, "targets: 1 met, 1 missed, 1 informational\n"), text)
}

func TestReportJSONRoundTrips(t *testing.T) {
	rep := sampleReport(t)
	out, err := json.MarshalIndent(rep, "", "  ")
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, rep, back)
	require.Contains(t, string(out), `"ratioOf": "ours/base"`)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFailing }

var errFailing = &json.UnsupportedValueError{Str: "write failed"}

func TestWriteTableReportsWriteErrors(t *testing.T) {
	require.ErrorIs(t, sampleReport(t).WriteTable(failingWriter{}), errFailing)
}

func TestParseRows(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  string
	}{
		{"1", []int{1}, ""},
		{"7,1,3", []int{1, 3, 7}, ""},
		{"3-5", []int{3, 4, 5}, ""},
		{"1, 2-3,2", []int{1, 2, 3}, ""},
		{"0", nil, `row "0" is not a number from 1 to 9`},
		{"10", nil, `row "10" is not a number from 1 to 9`},
		{"x", nil, `row "x" is not a number from 1 to 9`},
		{"", nil, `row "" is not a number from 1 to 9`},
		{"5-3", nil, `row range "5-3" is backwards`},
		{"2-", nil, `row "" is not a number from 1 to 9`},
	}
	for _, c := range cases {
		got, err := ParseRows(c.in)
		if c.err != "" {
			require.EqualError(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
}

func TestValidate(t *testing.T) {
	for _, cfg := range []Config{Full(), Quick()} {
		cfg.Dir = t.TempDir()
		require.NoError(t, cfg.Validate())
	}
	cfg := Quick()
	cfg.Dir = t.TempDir()
	bad := cfg
	bad.Fanout = 0
	require.EqualError(t, bad.Validate(), "fanout must be at least 1, got 0")
	bad = cfg
	bad.CatalogChildren = bad.CatalogSessions
	require.ErrorContains(t, bad.Validate(), "must be fewer than catalog sessions")
	bad = cfg
	bad.Rows = []int{10}
	require.ErrorContains(t, bad.Validate(), "row 10")
	for _, sizes := range [][]int{nil, {1000}, {1000, 1000}, {0, 10}, {100, 10}} {
		bad = cfg
		bad.ScaleSizes = sizes
		require.ErrorContains(t, bad.Validate(), "scale sizes", "%v", sizes)
	}
	bad = cfg
	bad.ResumeEvents = nil
	require.ErrorContains(t, bad.Validate(), "resume sizes")
	bad = cfg
	bad.Dir = ""
	require.ErrorContains(t, bad.Validate(), "folder")
}

func TestSamples(t *testing.T) {
	var s Samples
	require.Zero(t, s.Median())
	require.Zero(t, s.Mean())
	s = Samples{5, 1, 3}
	require.Equal(t, 3.0, s.Median())
	require.Equal(t, 3.0, s.Mean())
	s = append(s, 100)
	require.Equal(t, 4.0, s.Median())
	require.Equal(t, Samples{5, 1, 3, 100}, s, "Median does not reorder the samples")
}

func TestResumeRounds(t *testing.T) {
	require.Equal(t, 50, resumeRounds(50, 10))
	require.Equal(t, 50, resumeRounds(50, 1000))
	require.Equal(t, 5, resumeRounds(50, 10_000))
	require.Equal(t, 3, resumeRounds(50, 100_000))
	require.Equal(t, 1, resumeRounds(0, 10))
}
