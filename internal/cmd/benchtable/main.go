package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var contender = regexp.MustCompile(`^(blaze-[a-z]+|mcdb)$`)

type key struct{ workload, metric string }

// results are the benchmarks read: the pairs (each workload with a
// contender segment, by contender) and the rest by their whole name
// without the GOMAXPROCS suffix.
type results struct {
	pairs map[key]map[string][]float64
	order []key
	solo  map[key][]float64
}

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: benchtable bench.txt [bench-engine.txt]")
		os.Exit(64)
	}
	r := newResults()
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		err = r.read(f)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	r.printPairs(os.Stdout)
	fmt.Println()
	printTargets(os.Stdout, r)
	fmt.Println()
	printBudgets(os.Stdout, r)
}

func newResults() *results {
	return &results{pairs: map[key]map[string][]float64{}, solo: map[key][]float64{}}
}

func (r *results) read(f io.Reader) error {
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i] // the GOMAXPROCS suffix
		}
		var who string
		var rest []string
		for _, seg := range strings.Split(name, "/") {
			if contender.MatchString(seg) && who == "" {
				who = seg
			} else {
				rest = append(rest, seg)
			}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			unit := fields[i+1]
			if unit == "B/op" || unit == "allocs/op" || unit == "MB/s" {
				continue
			}
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			if who == "" {
				k := key{name, unit}
				r.solo[k] = append(r.solo[k], v)
				continue
			}
			k := key{strings.Join(rest, "/"), unit}
			if r.pairs[k] == nil {
				r.pairs[k] = map[string][]float64{}
				r.order = append(r.order, k)
			}
			r.pairs[k][who] = append(r.pairs[k][who], v)
		}
	}
	return sc.Err()
}

// pair is the median of a contender's figure for a workload (0: none).
func (r *results) pair(workload, metric, who string) float64 {
	return median(r.pairs[key{workload, metric}][who])
}

// single is the median of a benchmark without a contender (0: none).
func (r *results) single(name, metric string) float64 { return median(r.solo[key{name, metric}]) }

func (r *results) printPairs(w io.Writer) {
	cols := []string{"blaze-fast", "blaze-balanced", "blaze-zstd", "blaze-safe", "blaze-safebatch"}
	fmt.Fprintf(w, "%-30s %-13s", "workload", "unit")
	for _, c := range cols {
		fmt.Fprintf(w, " %15s", c)
	}
	fmt.Fprintf(w, " %12s   %s\n", "mcdb", "mcdb ÷ Blaze")
	for _, k := range r.order {
		m := r.pairs[k]
		mc := median(m["mcdb"])
		fmt.Fprintf(w, "%-30s %-13s", k.workload, k.metric)
		var ratios []string
		for _, c := range cols {
			v := median(m[c])
			fmt.Fprintf(w, " %15s", show(v))
			if v != 0 && mc != 0 {
				ratios = append(ratios, strings.TrimPrefix(c, "blaze-")+" "+ratio(mc, v))
			}
		}
		fmt.Fprintf(w, " %12s   %s\n", show(mc), strings.Join(ratios, ", "))
	}
	fmt.Fprintln(w, "\n× is mcdb ÷ Blaze: how many times faster (or smaller) Blaze is.")
}

// A target of issues #3 and #5: each figure must be at least (or, with
// atMost, at most) limit.
type target struct {
	name    string
	limit   float64
	atMost  bool
	figures []figure
}

type figure struct {
	label string
	v     float64 // 0: not measured
}

// targets computes each target's figures from r.
func targets(r *results) []target {
	faster := func(workload string, who ...string) []figure {
		var out []figure
		for _, c := range who {
			b, m := r.pair(workload, "ns/op", c), r.pair(workload, "ns/op", "mcdb")
			out = append(out, figure{strings.TrimPrefix(c, "blaze-"), quotient(m, b)})
		}
		return out
	}
	both := []string{"blaze-fast", "blaze-balanced"}
	clone := r.single("CodecFloor/Chunk.Clone", "ns/op")
	var hot []figure
	for _, c := range both {
		hot = append(hot, figure{strings.TrimPrefix(c, "blaze-"), quotient(r.pair("LoadColumn/hot", "ns/op", c), clone)})
	}
	mcdbDisk := r.pair("DiskSize", "disk-MiB", "mcdb")
	disk := []figure{ // the default durability, with its default LZ4, and zstd
		{"lz4", quotient(r.pair("DiskSize", "disk-MiB", "blaze-balanced"), mcdbDisk)},
		{"zstd", quotient(r.pair("DiskSize", "disk-MiB", "blaze-zstd"), mcdbDisk)},
	}
	return []target{
		{name: "StoreColumn, new column (× mcdb)", limit: 15, figures: faster("StoreColumn/new", both...)},
		{name: "StoreColumn, one block changed (× mcdb)", limit: 15, figures: faster("StoreColumn/changed", both...)},
		{name: "StoreColumn, unchanged (× mcdb)", limit: 50, figures: faster("StoreColumn/unchanged", both...)},
		// The same three stores, timed in bursts into an idle world
		// (BenchmarkStoreBurst): mcdb's stores without its compaction
		// backlog, which most of a sustained store of it waits for.
		{name: "in bursts: StoreColumn, new (× mcdb)", limit: 15, figures: faster("StoreBurst/new", both...)},
		{name: "in bursts: StoreColumn, changed (× mcdb)", limit: 15, figures: faster("StoreBurst/changed", both...)},
		{name: "in bursts: StoreColumn, unchanged (× mcdb)", limit: 50, figures: faster("StoreBurst/unchanged", both...)},
		{name: "real world: StoreColumn, new (× mcdb)", limit: 15, figures: faster("RealWorld/store", both...)},
		{name: "in bursts: real world, new (× mcdb)", limit: 15, figures: faster("StoreBurst/real-new", both...)},
		{name: "real world: StoreColumn, unchanged (× mcdb)", limit: 50, figures: faster("RealWorld/unchanged", both...)},
		{name: "LoadColumn, cold (× mcdb)", limit: coldTarget, figures: faster("LoadColumn/cold", both...)},
		{name: "real world: LoadColumn, cold (× mcdb)", limit: coldTarget, figures: faster("RealWorld/load-cold", both...)},
		{name: "11×11 area after opening (× mcdb)", limit: 20, figures: faster("Area11x11", "blaze-balanced")},
		{name: "LoadColumn, hot (÷ Chunk.Clone)", limit: 1.5, atMost: true, figures: hot},
		{name: "cold load ÷ Blaze's codec floor", limit: 1.3, atMost: true, figures: []figure{
			{"worker", r.single("ColdLoadFloor/interleaved", "cold/floor")},
			{"no worker", r.single("ColdLoadFloor/interleaved-no-worker", "cold/floor")}}},
		{name: "disk size after compaction (÷ mcdb)", limit: 1.2, atMost: true, figures: disk},
		{name: "p99 during compaction (÷ idle)", limit: 2, atMost: true, figures: []figure{
			{"balanced", quotient(r.single("LoadDuringCompaction/compacting", "p99-µs"), r.single("LoadDuringCompaction/idle", "p99-µs"))}}},
	}
}

// met reports whether every figure of t is within its limit; measured is
// false (and met with it) when a figure is missing.
func (t target) met() (met, measured bool) {
	met = true
	for _, f := range t.figures {
		if f.v == 0 {
			return false, false
		}
		if t.atMost && f.v > t.limit || !t.atMost && f.v < t.limit {
			met = false
		}
	}
	return met, len(t.figures) > 0
}

func printTargets(w io.Writer, r *results) {
	fmt.Fprintf(w, "%-45s %-8s %-34s %s\n", "target (issues #3 and #5)", "limit", "measured", "met")
	for _, t := range targets(r) {
		limit := fmt.Sprintf("≥ %g", t.limit)
		if t.atMost {
			limit = fmt.Sprintf("≤ %g", t.limit)
		}
		var fs []string
		for _, f := range t.figures {
			fs = append(fs, fmt.Sprintf("%s %s", f.label, show2(f.v)))
		}
		verdict := "no"
		switch met, measured := t.met(); {
		case !measured:
			verdict = "not measured"
		case met:
			verdict = "yes"
		}
		fmt.Fprintf(w, "%-45s %-8s %-34s %s\n", t.name, limit, strings.Join(fs, ", "), verdict)
	}
}

// coldTarget is issue #3's cold-load target: so many times faster than
// mcdb.
const coldTarget = 15

// budget is what a cold-load target of coldTarget× mcdb leaves a cold load of one
// set of columns, beside Blaze's cold and hot loads of them and the floor
// of decoding them (NetworkDecode: blocks and biomes, without NBT). All
// in ns; 0 where not measured.
type budget struct {
	columns                     string
	budget, cold, hot, netFloor float64
}

func budgets(r *results) []budget {
	const who = "blaze-balanced" // the default
	row := func(columns, cold, hot, floor string) budget {
		return budget{
			columns:  columns,
			budget:   quotient(r.pair(cold, "ns/op", "mcdb"), coldTarget),
			cold:     r.pair(cold, "ns/op", who),
			hot:      r.pair(hot, "ns/op", who),
			netFloor: r.single(floor, "ns/op"),
		}
	}
	return []budget{
		row("realistic columns", "LoadColumn/cold", "LoadColumn/hot", "CodecFloor/NetworkDecode"),
		row("the real worlds' columns", "RealWorld/load-cold", "RealWorld/load-hot", "RealWorldFloor/NetworkDecode"),
	}
}

func printBudgets(w io.Writer, r *results) {
	head := fmt.Sprintf("a cold load at %g× mcdb (µs, balanced)", float64(coldTarget))
	fmt.Fprintf(w, "%-45s %10s %10s %10s %14s\n", head, "budget", "cold", "hot", "NetworkDecode")
	µs := func(v float64) string { return show2(v / 1e3) }
	for _, b := range budgets(r) {
		fmt.Fprintf(w, "%-45s %10s %10s %10s %14s\n", b.columns, µs(b.budget), µs(b.cold), µs(b.hot), µs(b.netFloor))
	}
	fmt.Fprintln(w, "\nhot is a copy of a column already decoded; NetworkDecode decodes blocks and biomes only.")
}

// quotient is a ÷ b, or 0 when either is missing.
func quotient(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
}

func show2(v float64) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", v)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2 // as benchstat takes it
	}
	return s[len(s)/2]
}

func show(v float64) string {
	switch {
	case v == 0:
		return "—"
	case v >= 1e6:
		return fmt.Sprintf("%.3g M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3g k", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

func ratio(mcdb, blaze float64) string {
	if mcdb == 0 || blaze == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", mcdb/blaze)
}
