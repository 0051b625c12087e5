package main

import (
	"math"
	"math/bits"
)

// histogram counts latencies in nanoseconds in log-linear buckets: exact
// below 64 ns, then 64 buckets per power of two, so any percentile is off
// by at most 1/64 (1.6%) of its value. Recording is an index computation
// and an increment; each load connection has its own and they are merged
// after the run, so the hot loop shares nothing.
type histogram struct {
	counts [histBuckets]uint64
	n      uint64
	max    uint64
}

const (
	subBits     = 6
	subBuckets  = 1 << subBits
	histBuckets = (64 - subBits + 1) * subBuckets
)

// bucketOf maps a value to its bucket index.
func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - subBits - 1 // v>>e is in [64, 128)
	return e*subBuckets + int(v>>e)
}

// bucketUpper is the largest value that falls in bucket i.
func bucketUpper(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	e := i/subBuckets - 1
	m := uint64(i%subBuckets + subBuckets)
	return (m+1)<<e - 1
}

func (h *histogram) record(v uint64) {
	h.counts[bucketOf(v)]++
	h.n++
	if v > h.max {
		h.max = v
	}
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// percentile returns the value at quantile q (0 < q <= 1): the upper bound
// of the bucket holding the ceil(q*n)-th smallest value, so a reported p99
// is never below the true one by more than the bucket width. It never
// exceeds the largest value recorded. An empty histogram gives 0.
func (h *histogram) percentile(q float64) uint64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(bucketUpper(i), h.max)
		}
	}
	return h.max
}
