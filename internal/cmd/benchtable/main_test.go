package main

import "testing"

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
