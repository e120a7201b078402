package session

// BenchData is the ~200-byte event payload of the benchmarks, for those of
// the external test package.
var BenchData = benchData
