package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
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

func TestMedianCI(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		return xs
	}
	for _, c := range []struct {
		n      int
		lo, hi float64 // order statistics, 1-based; 0: no interval
	}{
		{3, 0, 0},
		{5, 0, 0},   // P(B = 0) = 3.1%
		{6, 1, 6},   // 1.6%
		{20, 6, 15}, // P(B <= 5) = 2.07%, P(B <= 6) = 5.8%
		{60, 22, 39},
		{2000, 956, 1045}, // past where 0.5^n underflows
	} {
		if lo, hi := medianCI(seq(c.n)); lo != c.lo || hi != c.hi {
			t.Errorf("n=%d: %v-%v, want %v-%v", c.n, lo, hi, c.lo, c.hi)
		}
	}
	// The interval holds the true median in about 95% of samples of a
	// long-tailed distribution, not in all of them.
	rng := rand.New(rand.NewPCG(1, 2))
	held := 0
	for range 2000 {
		xs := make([]float64, 20)
		for i := range xs {
			xs[i] = rng.ExpFloat64() // median ln 2
		}
		sort.Float64s(xs)
		if lo, hi := medianCI(xs); lo <= math.Ln2 && math.Ln2 <= hi {
			held++
		}
	}
	if held < 1880 || held > 1960 {
		t.Errorf("the interval held the median in %d of 2000 samples, want about 95.9%%", held)
	}
}
