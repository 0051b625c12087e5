package main

import (
	"fmt"
	"math"
	"sort"
)

// Paired ratios. On a noisy machine (a shared VM whose speed drifts by 15%
// from one minute to the next) the best round of each server, taken
// independently, can come from different minutes, and their ratio swings
// as much as the drift. Rounds alternate the servers, so round i of one
// and round i of the other ran a few seconds apart: the ratio of each
// such pair cancels most of the drift, and the median of the pairs
// discards the rounds another program disturbed. That is the figure to
// judge a small difference by (persistence's cost against cellserver-off);
// the best rounds stay in the table for absolute numbers.

// roundOrder is the order in which round runs its n servers: as listed in
// even rounds, reversed in odd ones. A server that always ran first would
// carry whatever the first run of a round meets (the machine's state after
// the other server's run, say) in every pair; alternating the order puts
// it on both sides of the ratio equally often.
func roundOrder(n, round int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
		if round%2 == 1 {
			order[i] = n - 1 - i
		}
	}
	return order
}

// minPairedRounds is the fewest rounds a median of pairs is reported for.
const minPairedRounds = 3

// pairedRatio summarises the per-round ratios of a row against its
// reference: medians, and the range of the ops/s ratios.
type pairedRatio struct {
	Rounds    int     `json:"rounds"`
	OpsMedian float64 `json:"ops_median"`
	OpsMin    float64 `json:"ops_min"`
	OpsMax    float64 `json:"ops_max"`
	CPUMedian float64 `json:"cpu_median,omitempty"`
	// OpsLow and OpsHigh bound the ops/s median with 95% confidence
	// (medianCI); zero with too few rounds for one.
	OpsLow  float64 `json:"ops_median_low,omitempty"`
	OpsHigh float64 `json:"ops_median_high,omitempty"`
}

// pairRounds is r's paired ratio against ref, or nil when they did not
// run the same rounds (at least minPairedRounds) side by side.
func pairRounds(r, ref *row) *pairedRatio {
	n := len(r.RoundOps)
	if n < minPairedRounds || len(ref.RoundOps) != n || len(r.RoundCPU) != n || len(ref.RoundCPU) != n {
		return nil
	}
	var ops, cpu []float64
	for i := range n {
		if ref.RoundOps[i] <= 0 {
			return nil
		}
		ops = append(ops, r.RoundOps[i]/ref.RoundOps[i])
		if ref.RoundCPU[i] > 0 {
			cpu = append(cpu, r.RoundCPU[i]/ref.RoundCPU[i])
		}
	}
	p := &pairedRatio{Rounds: n, OpsMedian: median(ops)}
	p.OpsMin, p.OpsMax = ops[0], ops[n-1] // median sorted them
	p.OpsLow, p.OpsHigh = medianCI(ops)
	if len(cpu) == n {
		p.CPUMedian = median(cpu)
	}
	return p
}

// median sorts xs and returns its middle value (the mean of the two
// middle ones for an even count).
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// medianCI returns an interval that holds the median of the distribution
// sorted (ascending) was drawn from with at least 95% confidence: the
// order statistics j and n+1-j, for the largest j with P(Binomial(n, 1/2)
// < j) <= 2.5%. It needs no assumption about the distribution, which on
// a noisy machine has long tails, and no random resampling, so a report
// is reproducible. Below 6 values, too few for 95%, it returns zeros.
func medianCI(sorted []float64) (lo, hi float64) {
	n := len(sorted)
	// P(B = k), in logarithms: 0.5^n underflows past 1,074 rounds.
	pmf := func(k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return math.Exp(a - b - c - float64(n)*math.Ln2)
	}
	j := 0
	for cdf := pmf(0); j < n/2 && cdf <= 0.025; cdf += pmf(j) {
		j++ // P(B < j) <= 2.5%: x_(j) may be the lower bound
	}
	if j == 0 {
		return 0, 0
	}
	return sorted[j-1], sorted[n-j]
}

// String is the ratio column's addition: "paired: 0.93x (0.86-1.01),
// median within 0.90-0.95 (95%), 1.05x CPU/op, 20 rounds".
func (p *pairedRatio) String() string {
	s := fmt.Sprintf("paired: %.2fx (%.2f-%.2f)", p.OpsMedian, p.OpsMin, p.OpsMax)
	if p.OpsHigh > 0 {
		s += fmt.Sprintf(", median within %.2f-%.2f (95%%)", p.OpsLow, p.OpsHigh)
	}
	if p.CPUMedian > 0 {
		s += fmt.Sprintf(", %.2fx CPU/op", p.CPUMedian)
	}
	return s + fmt.Sprintf(", %d rounds", p.Rounds)
}
