package main

import (
	"fmt"
	"math"
	"testing"
)

func TestRoundOrder(t *testing.T) {
	for _, c := range []struct {
		n, round int
		want     string
	}{
		{1, 0, "[0]"},
		{1, 1, "[0]"},
		{2, 0, "[0 1]"},
		{2, 1, "[1 0]"},
		{2, 2, "[0 1]"},
		{3, 3, "[2 1 0]"},
	} {
		if got := fmt.Sprint(roundOrder(c.n, c.round)); got != c.want {
			t.Errorf("roundOrder(%d, %d) = %s, want %s", c.n, c.round, got, c.want)
		}
	}
	// Over an even number of rounds each server runs first as often as
	// the other.
	first := map[int]int{}
	for round := range 10 {
		first[roundOrder(2, round)[0]]++
	}
	if first[0] != 5 || first[1] != 5 {
		t.Errorf("runs first: %v, want 5 each", first)
	}
}

func TestPairRounds(t *testing.T) {
	r := &row{RoundOps: []float64{90, 100, 45}, RoundCPU: []float64{2, 2, 3}}
	ref := &row{RoundOps: []float64{100, 100, 50}, RoundCPU: []float64{1, 2, 2}}
	p := pairRounds(r, ref)
	if p == nil {
		t.Fatal("no paired ratio for three rounds")
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if p.Rounds != 3 || !near(p.OpsMedian, 0.9) || !near(p.OpsMin, 0.9) || !near(p.OpsMax, 1) || !near(p.CPUMedian, 1.5) {
		t.Errorf("paired = %+v, want 3 rounds, median 0.9 (0.9-1), CPU 1.5", *p)
	}
	if pairRounds(&row{RoundOps: []float64{1, 1}, RoundCPU: []float64{1, 1}}, &row{RoundOps: []float64{1, 1}, RoundCPU: []float64{1, 1}}) != nil {
		t.Error("a paired ratio for two rounds")
	}
	if pairRounds(r, &row{RoundOps: []float64{100, 0, 50}, RoundCPU: []float64{1, 2, 2}}) != nil {
		t.Error("a paired ratio over a round the reference did not measure")
	}
}
