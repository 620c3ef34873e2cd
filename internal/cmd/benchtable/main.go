// Command benchtable reads `go test -bench` output and prints one table:
// each workload, Blaze in each durability mode, mcdb, and how many times
// faster (or smaller) Blaze is. Benchmarks are paired by name: the segment
// "blaze-<mode>" or "mcdb" names the contender; the rest names the workload.
// Each cell is the median over the runs (-count). A benchmark whose time
// means nothing (a disk size, a replayed trace) reports ns/op as 0, which
// go test leaves out, so only its own metrics appear.
//
//	go run ./internal/cmd/benchtable bench.txt
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var contender = regexp.MustCompile(`^(blaze-[a-z]+|mcdb)$`)

type key struct{ workload, metric string }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchtable bench.txt")
		os.Exit(64)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	values := map[key]map[string][]float64{}
	var order []key
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
		if who == "" {
			continue
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
			k := key{strings.Join(rest, "/"), unit}
			if values[k] == nil {
				values[k] = map[string][]float64{}
				order = append(order, k)
			}
			values[k][who] = append(values[k][who], v)
		}
	}
	cols := []string{"blaze-fast", "blaze-balanced", "blaze-zstd", "blaze-safe", "blaze-safebatch"}
	fmt.Printf("%-30s %-13s", "workload", "unit")
	for _, c := range cols {
		fmt.Printf(" %15s", c)
	}
	fmt.Printf(" %12s   %s\n", "mcdb", "mcdb ÷ Blaze")
	for _, k := range order {
		m := values[k]
		mc := median(m["mcdb"])
		fmt.Printf("%-30s %-13s", k.workload, k.metric)
		var ratios []string
		for _, c := range cols {
			v := median(m[c])
			fmt.Printf(" %15s", show(v))
			if v != 0 && mc != 0 {
				ratios = append(ratios, strings.TrimPrefix(c, "blaze-")+" "+ratio(mc, v))
			}
		}
		fmt.Printf(" %12s   %s\n", show(mc), strings.Join(ratios, ", "))
	}
	fmt.Println("\n× is mcdb ÷ Blaze: how many times faster (or smaller) Blaze is.")
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
