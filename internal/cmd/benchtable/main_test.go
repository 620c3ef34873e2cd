package main

import (
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		// An even count (make bench's default of 6 runs) takes the mean of
		// the middle two, as benchstat does, not the upper one.
		{[]float64{193, 147, 147, 145, 180, 183}, 163.5},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// The targets are read off the benchmarks they name, and a target is met
// only when every one of its figures is measured and within its limit.
func TestTargets(t *testing.T) {
	const out = `
BenchmarkStoreColumn/blaze-fast/new-2  10  100000 ns/op  5 B/op
BenchmarkStoreColumn/blaze-balanced/new-2  10  200000 ns/op
BenchmarkStoreColumn/mcdb/new-2  10  2000000 ns/op
BenchmarkStoreBurst/blaze-fast/unchanged-2  640  10000 ns/op
BenchmarkStoreBurst/blaze-balanced/unchanged-2  640  8000 ns/op
BenchmarkStoreBurst/mcdb/unchanged-2  640  400000 ns/op
BenchmarkLoadColumn/blaze-fast/hot-2  10  30000 ns/op
BenchmarkLoadColumn/blaze-balanced/hot-2  10  40000 ns/op
BenchmarkCodecFloor/Chunk.Clone-2  10  20000 ns/op
BenchmarkLoadDuringCompaction/idle-2  10  1 ns/op  20 p50-µs  100 p99-µs
BenchmarkLoadDuringCompaction/compacting-2  10  1 ns/op  25 p50-µs  150 p99-µs
`
	r := newResults()
	if err := r.read(strings.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	got := map[string]target{}
	for _, tg := range targets(r) {
		got[tg.name] = tg
	}
	for name, want := range map[string]struct {
		met, measured bool
		figures       []float64
	}{
		"StoreColumn, new column (× mcdb)":           {false, true, []float64{20, 10}}, // balanced misses 15×
		"in bursts: StoreColumn, unchanged (× mcdb)": {false, true, []float64{40, 50}}, // its own figures
		"LoadColumn, hot (÷ Chunk.Clone)":            {false, true, []float64{1.5, 2}}, // 1.5 is within; 2 is not
		"p99 during compaction (÷ idle)":             {true, true, []float64{1.5}},
		"LoadColumn, cold (× mcdb)":                  {false, false, nil},
		"disk size after compaction (÷ mcdb)":        {false, false, nil},
	} {
		tg, ok := got[name]
		if !ok {
			t.Fatalf("no target %q", name)
		}
		met, measured := tg.met()
		if met != want.met || measured != want.measured {
			t.Errorf("%s: met %v, measured %v; want %v, %v", name, met, measured, want.met, want.measured)
		}
		for i, v := range want.figures {
			if tg.figures[i].v != v {
				t.Errorf("%s: figure %d is %v, want %v", name, i, tg.figures[i].v, v)
			}
		}
	}
}

// A budget is mcdb's cold load ÷ 15, beside the figures it is read with.
func TestBudgets(t *testing.T) {
	const out = `
BenchmarkRealWorld/blaze-balanced/load-cold-2  10  40000 ns/op
BenchmarkRealWorld/blaze-fast/load-cold-2  10  1 ns/op
BenchmarkRealWorld/mcdb/load-cold-2  10  300000 ns/op
BenchmarkRealWorld/blaze-balanced/load-hot-2  10  21000 ns/op
BenchmarkRealWorldFloor/NetworkDecode-2  10  22000 ns/op
`
	r := newResults()
	if err := r.read(strings.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	var real, synthetic budget
	for _, b := range budgets(r) {
		switch b.columns {
		case "the real worlds' columns":
			real = b
		case "realistic columns":
			synthetic = b
		}
	}
	if want := (budget{"the real worlds' columns", 20000, 40000, 21000, 22000}); real != want {
		t.Errorf("real worlds: %+v, want %+v", real, want)
	}
	if want := (budget{columns: "realistic columns"}); synthetic != want {
		t.Errorf("realistic columns, not measured: %+v, want %+v", synthetic, want)
	}
}
