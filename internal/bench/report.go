package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Kind says how a Value's amount reads: a duration in nanoseconds, a rate
// per second, or a size in bytes.
type Kind string

const (
	// Duration amounts are nanoseconds.
	Duration Kind = "ns"
	// Rate amounts are things per second (Value.Per names the things).
	Rate Kind = "per-second"
	// Size amounts are bytes.
	Size Kind = "bytes"
)

// Value is one measured figure: what was measured (Label), how much, and
// in which kind; Per qualifies it ("events" for a rate, "child" for a
// duration per child).
type Value struct {
	Label  string  `json:"label"`
	Amount float64 `json:"amount"`
	Kind   Kind    `json:"kind"`
	Per    string  `json:"per,omitempty"`
}

// Ns is a duration Value of ns nanoseconds.
func Ns(label string, ns float64) Value { return Value{Label: label, Amount: ns, Kind: Duration} }

// NsPer is a duration Value of ns nanoseconds per one of what per names
// ("event", "child").
func NsPer(label string, ns float64, per string) Value {
	return Value{Label: label, Amount: ns, Kind: Duration, Per: per}
}

// PerSec is a rate Value of rate things per second.
func PerSec(label string, rate float64, things string) Value {
	return Value{Label: label, Amount: rate, Kind: Rate, Per: things}
}

// Bytes is a size Value.
func Bytes(label string, bytes float64) Value { return Value{Label: label, Amount: bytes, Kind: Size} }

// String formats the amount with a readable unit: "812 ns", "6.05
// µs/event", "12.3k events/s", "1.18 KiB".
func (v Value) String() string {
	switch v.Kind {
	case Duration:
		if v.Per != "" {
			return FormatNs(v.Amount) + "/" + v.Per
		}
		return FormatNs(v.Amount)
	case Rate:
		per := v.Per
		if per == "" {
			per = "op"
		}
		return FormatCount(v.Amount) + " " + per + "/s"
	case Size:
		return FormatBytes(v.Amount)
	}
	return fmt.Sprintf("%.3g", v.Amount)
}

// RatioOf says which way a Line's ratio is taken.
type RatioOf string

const (
	// OursOverBase: ours ÷ baseline (a slowdown for durations, a share for
	// rates).
	OursOverBase RatioOf = "ours/base"
	// BaseOverOurs: baseline ÷ ours (how many times faster we are, for
	// durations).
	BaseOverOurs RatioOf = "base/ours"
)

// Op is a Target's comparison.
type Op string

const (
	// AtMost is ≤.
	AtMost Op = "<="
	// AtLeast is ≥.
	AtLeast Op = ">="
)

// Target is what a Line aims for. With OnOurs false it bounds the ratio
// (Percent shows it as a percentage); with OnOurs true it bounds our own
// amount (used only for sizes, never for times, which are too noisy on a
// shared machine to judge absolutely).
type Target struct {
	Op      Op      `json:"op"`
	Value   float64 `json:"value"`
	Percent bool    `json:"percent,omitempty"`
	OnOurs  bool    `json:"onOurs,omitempty"`
}

// String renders the target: "≤ 3×", "≥ 30%", "ours ≤ 4.00 KiB".
func (t Target) String() string {
	sym := "≤"
	if t.Op == AtLeast {
		sym = "≥"
	}
	if t.OnOurs {
		return "ours " + sym + " " + FormatBytes(t.Value)
	}
	if t.Percent {
		return sym + " " + trimFloat(t.Value*100) + "%"
	}
	return sym + " " + trimFloat(t.Value) + "×"
}

// Met reports whether x satisfies the target.
func (t Target) Met(x float64) bool {
	if t.Op == AtLeast {
		return x >= t.Value
	}
	return x <= t.Value
}

// Status is a Line's verdict: met, missed, or info when it has no target.
type Status string

const (
	// Met: the target was reached in this run.
	Met Status = "met"
	// Missed: the target was not reached in this run.
	Missed Status = "missed"
	// Info: the line has no target.
	Info Status = "info"
)

// Line is one row of the table: our figure, the baseline measured in the
// same run, their ratio, and the target if there is one.
type Line struct {
	Row     int     `json:"row"`
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Ours    Value   `json:"ours"`
	Base    Value   `json:"baseline"`
	RatioOf RatioOf `json:"ratioOf"`
	Ratio   float64 `json:"ratio"`
	Target  *Target `json:"target,omitempty"`
	Status  Status  `json:"status"`
	Note    string  `json:"note,omitempty"`
}

// ErrBadRatio is returned by Compare when a ratio cannot be formed (a zero,
// negative, infinite or NaN amount, or values of different kinds).
var ErrBadRatio = errors.New("bench: ratio is undefined")

// Compare builds the Line for ours against base: the ratio taken as of
// says, and the status against target (nil: Info). It fails with
// ErrBadRatio when either amount is not a positive finite number or the
// kinds differ.
func Compare(id, name string, ours, base Value, of RatioOf, target *Target) (Line, error) {
	ratio, err := Ratio(ours, base, of)
	if err != nil {
		return Line{}, fmt.Errorf("%s %s: %w", id, name, err)
	}
	l := Line{Row: rowOf(id), ID: id, Name: name, Ours: ours, Base: base, RatioOf: of, Ratio: ratio, Target: target, Status: Info}
	if target != nil {
		x := ratio
		if target.OnOurs {
			x = ours.Amount
		}
		l.Status = Missed
		if target.Met(x) {
			l.Status = Met
		}
	}
	return l, nil
}

// Ratio is ours÷base (OursOverBase) or base÷ours (BaseOverOurs); both
// amounts must be positive and finite and of the same kind.
func Ratio(ours, base Value, of RatioOf) (float64, error) {
	if ours.Kind != base.Kind {
		return 0, fmt.Errorf("%w: %s against %s", ErrBadRatio, ours.Kind, base.Kind)
	}
	for _, v := range []Value{ours, base} {
		if !(v.Amount > 0) || math.IsInf(v.Amount, 0) {
			return 0, fmt.Errorf("%w: %s is %v", ErrBadRatio, v.Label, v.Amount)
		}
	}
	switch of {
	case OursOverBase:
		return ours.Amount / base.Amount, nil
	case BaseOverOurs:
		return base.Amount / ours.Amount, nil
	}
	return 0, fmt.Errorf("%w: unknown direction %q", ErrBadRatio, of)
}

// rowOf is the leading number of an id such as "5c".
func rowOf(id string) int {
	n := 0
	for _, c := range id {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// RatioString renders a Line's ratio: "ours/base 2.80×", or a percentage
// ("ours/base 41.0%") when its target is one, or when a rate without a
// target is compared as a share of its baseline.
func (l Line) RatioString() string {
	share := l.Target == nil && l.Ours.Kind == Rate && l.RatioOf == OursOverBase
	if share || l.Target != nil && l.Target.Percent {
		return string(l.RatioOf) + " " + FormatPercent(l.Ratio)
	}
	return string(l.RatioOf) + " " + FormatTimes(l.Ratio)
}

// TargetString is the target, or "—" without one.
func (l Line) TargetString() string {
	if l.Target == nil {
		return "—"
	}
	return l.Target.String()
}

// Report is the outcome of one Run: the environment and the lines, in
// row order.
type Report struct {
	Env   Env    `json:"env"`
	Lines []Line `json:"lines"`
}

// Env describes where and how the report was measured.
type Env struct {
	GoVersion  string `json:"goVersion"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	NumCPU     int    `json:"numCPU"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Dir        string `json:"dir"`
	Quick      bool   `json:"quick"`
	Elapsed    string `json:"elapsed"`
}

// WriteTable writes the report as an aligned text table (our amount,
// the baseline's label and amount, the ratio, the target, the result), then
// one footnote per line that has a note, then the count of targets met and
// missed. It returns the first write error.
func (r Report) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "dsh-actors bench: %s %s/%s, %d CPUs, GOMAXPROCS=%d, quick=%t, stores in %s, took %s\n",
		r.Env.GoVersion, r.Env.GOOS, r.Env.GOARCH, r.Env.NumCPU, r.Env.GOMAXPROCS, r.Env.Quick, r.Env.Dir, r.Env.Elapsed)
	fmt.Fprintln(ew, "ratios are measured in this run against baselines measured in this run; targets are informational")
	fmt.Fprintln(ew)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tmeasurement\tours\tbaseline\tratio\ttarget\tresult")
	for _, l := range r.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t%s\t%s\t%s\n",
			l.ID, l.Name, l.Ours.String(), l.Base.Label, l.Base.String(),
			l.RatioString(), l.TargetString(), l.Status)
	}
	_ = tw.Flush()
	var notes []string
	for _, l := range r.Lines {
		if l.Note != "" {
			notes = append(notes, fmt.Sprintf("[%s] %s", l.ID, l.Note))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(ew)
		fmt.Fprintln(ew, strings.Join(notes, "\n"))
	}
	met, missed := r.Count()
	fmt.Fprintf(ew, "\ntargets: %d met, %d missed, %d informational\n", met, missed, len(r.Lines)-met-missed)
	return ew.err
}

// Count returns how many lines met and missed their target.
func (r Report) Count() (met, missed int) {
	for _, l := range r.Lines {
		switch l.Status {
		case Met:
			met++
		case Missed:
			missed++
		}
	}
	return met, missed
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// FormatNs renders nanoseconds with three significant digits in ns, µs,
// ms or s.
func FormatNs(ns float64) string {
	ns = roundSig(ns)
	switch a := math.Abs(ns); {
	case a < 1e3:
		return sig3(ns) + " ns"
	case a < 1e6:
		return sig3(ns/1e3) + " µs"
	case a < 1e9:
		return sig3(ns/1e6) + " ms"
	}
	return sig3(ns/1e9) + " s"
}

// FormatCount renders a count with three significant digits and a k, M or
// G suffix.
func FormatCount(x float64) string {
	x = roundSig(x)
	switch a := math.Abs(x); {
	case a < 1e3:
		return sig3(x)
	case a < 1e6:
		return sig3(x/1e3) + "k"
	case a < 1e9:
		return sig3(x/1e6) + "M"
	}
	return sig3(x/1e9) + "G"
}

// FormatBytes renders a size in B, KiB or MiB.
func FormatBytes(b float64) string {
	b = roundSig(b)
	switch a := math.Abs(b); {
	case a < 1024:
		return sig3(b) + " B"
	case a < 1024*1024:
		return sig3(b/1024) + " KiB"
	}
	return sig3(b/(1024*1024)) + " MiB"
}

// FormatTimes renders a ratio as "2.80×" (three significant digits).
func FormatTimes(r float64) string { return sig3(r) + "×" }

// FormatPercent renders a ratio as a percentage: 0.412 → "41.2%".
func FormatPercent(r float64) string { return sig3(r*100) + "%" }

// sig3 formats x with three significant digits, without exponent.
func sig3(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Sprint(x)
	}
	a := math.Abs(x)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	case a >= 1:
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// roundSig rounds x to three significant digits, so that the unit is
// chosen after rounding (999.7 ns is "1.00 µs", not "1000 ns").
func roundSig(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	scale := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

// trimFloat renders a target's number without trailing zeros.
func trimFloat(x float64) string {
	s := fmt.Sprintf("%.2f", x)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
