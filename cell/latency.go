package cell

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Per-command latency histograms for INFO latencystats, like Redis's
// HdrHistograms: nanoseconds from 1 to 1s, about two significant digits.
// Buckets are log-linear: values below 128 ns exactly, then 64 buckets per
// power of two. A histogram is allocated at a command's first call, so
// commands never called cost nothing.

const (
	latencyExact   = 128
	latencySub     = 64
	latencyMaxBits = 30 // 2^30 ns > 1s, Redis's highest trackable value
	latencyBuckets = latencyExact + (latencyMaxBits-7)*latencySub
)

type latencyHist struct {
	counts [latencyBuckets]atomic.Int64
}

// latencyTracking is the latency-tracking setting (CONFIG SET).
var latencyTracking atomic.Bool

func init() { latencyTracking.Store(true) }

func latencyBucket(ns int64) int {
	v := uint64(min(max(ns, 1), 1e9))
	if v < latencyExact {
		return int(v)
	}
	e := bits.Len64(v)  // 8..30
	sub := v >> (e - 7) // 64..127
	return latencyExact + (e-8)*latencySub + int(sub-64)
}

// latencyBucketRange is the lowest and highest value bucket i holds.
func latencyBucketRange(i int) (lo, hi uint64) {
	if i < latencyExact {
		return uint64(i), uint64(i)
	}
	e := (i-latencyExact)/latencySub + 8
	sub := uint64((i-latencyExact)%latencySub + 64)
	return sub << (e - 7), (sub+1)<<(e-7) - 1
}

func (cs *cmdStats) recordLatency(d time.Duration) {
	if !latencyTracking.Load() {
		return
	}
	cs.histogram().counts[latencyBucket(int64(d))].Add(1)
}

// histogram returns the command's latency histogram, allocating it on
// first use.
func (cs *cmdStats) histogram() *latencyHist {
	h := cs.latency.Load()
	if h == nil {
		h = new(latencyHist)
		if !cs.latency.CompareAndSwap(nil, h) {
			h = cs.latency.Load()
		}
	}
	return h
}

// percentile returns the value at percentile p (0..100) in ns, as
// HdrHistogram's value_at_percentile: the highest value of the bucket where
// the cumulative count reaches p, or the lowest value of the first bucket
// for p = 0.
func (h *latencyHist) percentile(p float64) uint64 {
	var counts [latencyBuckets]int64
	total := int64(0)
	for i := range counts {
		counts[i] = h.counts[i].Load()
		total += counts[i]
	}
	if total == 0 {
		return 0
	}
	want := max(int64(math.Ceil(p/100*float64(total))), 1)
	seen := int64(0)
	for i, n := range counts {
		if n == 0 {
			continue
		}
		seen += n
		if p == 0 {
			lo, _ := latencyBucketRange(i)
			return max(lo, 1)
		}
		if seen >= want {
			_, hi := latencyBucketRange(i)
			return hi
		}
	}
	_, hi := latencyBucketRange(latencyBuckets - 1)
	return hi
}

// infoLatencyStats prints latency_percentiles_usec_<cmd> for every command
// with a histogram, at the latency-tracking-info-percentiles.
func infoLatencyStats(s *Server, x *Ctx, b *strings.Builder) {
	var pcts []float64
	for f := range strings.FieldsSeq(configParamByName("latency-tracking-info-percentiles").value(s)) {
		if v, err := strconv.ParseFloat(f, 64); err == nil {
			pcts = append(pcts, v)
		}
	}
	for _, c := range allCommands() {
		h := s.statsOf(c).latency.Load()
		if h == nil {
			continue
		}
		b.WriteString("latency_percentiles_usec_" + c.Name + ":")
		for i, p := range pcts {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("p" + strconv.FormatFloat(p, 'g', -1, 64) + "=")
			b.WriteString(strconv.FormatFloat(float64(h.percentile(p))/1000, 'f', 3, 64))
		}
		b.WriteString("\r\n")
	}
}

// allCommands lists commands and subcommands sorted by full name.
func allCommands() []*Command {
	var all []*Command
	for _, n := range commandNames() {
		c := commands[n]
		all = append(all, c)
		if c.Sub != nil {
			all = append(all, sortedSubcommands(c)...)
		}
	}
	return all
}

// parsePercentiles checks latency-tracking-info-percentiles: numbers
// between 0 and 100, separated by spaces, printed back as Redis does (%g).
func parsePercentiles(v string) (string, string) {
	var out []string
	for f := range strings.FieldsSeq(v) {
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(p) {
			return "", "Invalid latency-tracking-info-percentiles parameters"
		}
		if p < 0 || p > 100 {
			return "", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
		}
		out = append(out, strconv.FormatFloat(p, 'g', -1, 64))
	}
	return strings.Join(out, " "), ""
}
