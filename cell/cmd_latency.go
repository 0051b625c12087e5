package cell

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LATENCY: Redis 7.0's latency monitor and per-command histograms.
//
// The monitor is off by default (latency-monitor-threshold 0). When on, a
// command that ran for at least the threshold in ms adds a sample to the
// "command" event, or "fast-command" for commands flagged fast, as Redis's
// call() does. Those are the only events here: the others Redis knows
// (fork, AOF fsync, expire-cycle, eviction) come from machinery cellserver
// does not have. A series keeps the highest latency per second for the
// last 160 seconds with a sample, and the all-time high.
//
// LATENCY HISTOGRAM reads the latencystats histograms (latency.go) at the
// bucket boundaries Redis's HdrHistogram iteration reports.

func init() {
	admin := FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	special := []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}
	doc := func(summary, complexity string) *CommandDoc {
		return &CommandDoc{summary, "2.8.13", "server", complexity}
	}
	register(
		&Command{Name: "latency", Arity: -2, Handler: func(*Ctx) {},
			Doc: doc("A container for latency diagnostics commands", "Depends on subcommand.")},
		&Command{Name: "latency|latest", Arity: 2, Flags: admin, Handler: latencyLatest, Tips: special,
			Doc: doc("Return the latest latency samples for all events.", "O(1)")},
		&Command{Name: "latency|history", Arity: 3, Flags: admin, Handler: latencyHistory, Tips: special,
			Doc: doc("Return timestamp-latency samples for the event.", "O(1)")},
		&Command{Name: "latency|graph", Arity: 3, Flags: admin, Handler: latencyGraph, Tips: special,
			Doc: doc("Return a latency graph for the event.", "O(1)")},
		&Command{Name: "latency|doctor", Arity: 2, Flags: admin, Handler: latencyDoctor, Tips: special,
			Doc: doc("Return a human readable latency analysis report.", "O(1)")},
		&Command{Name: "latency|reset", Arity: -2, Flags: admin, Handler: latencyReset,
			Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
			Doc:  doc("Reset latency data for one or more events.", "O(1)")},
		&Command{Name: "latency|histogram", Arity: -2, Flags: admin, Handler: latencyHistogram, Tips: special,
			Doc: &CommandDoc{"Return the cumulative distribution of latencies of a subset of commands or all.", "7.0.0", "server",
				"O(N) where N is the number of commands with latency information being retrieved."}},
		&Command{Name: "latency|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: latencyHelp,
			Doc: doc("Show helpful text about the different subcommands.", "O(1)")},
	)
}

// latencySeriesLen is Redis's LATENCY_TS_LEN.
const latencySeriesLen = 160

type latencySample struct{ unix, ms int64 }

// latencySeries is one event's ring of per-second maxima.
type latencySeries struct {
	samples [latencySeriesLen]latencySample
	idx     int
	max     int64
}

// latencyTable is the events seen since start or the last LATENCY RESET.
type latencyTable struct {
	mu     sync.Mutex
	events map[string]*latencySeries
}

// add records a latency of ms for event now, keeping one sample per
// second (the highest), as Redis's latencyAddSample.
func (t *latencyTable) add(event string, ms int64) {
	now := time.Now().Unix()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.events[event]
	if s == nil {
		s = &latencySeries{}
		t.events[event] = s
	}
	s.max = max(s.max, ms)
	prev := &s.samples[(s.idx+latencySeriesLen-1)%latencySeriesLen]
	if prev.unix == now {
		prev.ms = max(prev.ms, ms)
		return
	}
	s.samples[s.idx] = latencySample{now, ms}
	s.idx = (s.idx + 1) % latencySeriesLen
}

// sortedEvents lists the event names; Redis's order is its hash table's.
func (t *latencyTable) sortedEvents() []string {
	names := make([]string, 0, len(t.events))
	for n := range t.events {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ordered returns the series' samples oldest first.
func (s *latencySeries) ordered() []latencySample {
	var out []latencySample
	for j := range latencySeriesLen {
		if sm := s.samples[(s.idx+j)%latencySeriesLen]; sm.unix != 0 {
			out = append(out, sm)
		}
	}
	return out
}

func latencyLatest(x *Ctx) {
	t := &x.srv.obs.latency
	t.mu.Lock()
	defer t.mu.Unlock()
	names := t.sortedEvents()
	x.W.Array(len(names))
	for _, n := range names {
		s := t.events[n]
		last := s.samples[(s.idx+latencySeriesLen-1)%latencySeriesLen]
		x.W.Array(4)
		x.W.BulkString(n)
		x.W.Int(last.unix)
		x.W.Int(last.ms)
		x.W.Int(s.max)
	}
}

func latencyHistory(x *Ctx) {
	t := &x.srv.obs.latency
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.events[string(x.Args[2])]
	if s == nil {
		x.W.Array(0)
		return
	}
	samples := s.ordered()
	x.W.Array(len(samples))
	for _, sm := range samples {
		x.W.Array(2)
		x.W.Int(sm.unix)
		x.W.Int(sm.ms)
	}
}

// latencyReset is LATENCY RESET [event ...]: the number of events dropped;
// names match in any case.
func latencyReset(x *Ctx) {
	t := &x.srv.obs.latency
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for name := range t.events {
		drop := len(x.Args) == 2
		for _, a := range x.Args[2:] {
			drop = drop || strings.EqualFold(name, string(a))
		}
		if drop {
			delete(t.events, name)
			n++
		}
	}
	x.W.Int(int64(n))
}

// latencyGraph is LATENCY GRAPH event: Redis's ASCII sparkline of the
// series (latencyCommandGenSparkeline).
func latencyGraph(x *Ctx) {
	t := &x.srv.obs.latency
	t.mu.Lock()
	s := t.events[string(x.Args[2])]
	var samples []latencySample
	var allTime int64
	if s != nil {
		samples, allTime = s.ordered(), s.max
	}
	t.mu.Unlock()
	if s == nil {
		x.Error(errLatencyNoSamples(cstring(x.Args[2])))
		return
	}
	x.W.Verbatim(renderLatencyGraph(string(x.Args[2]), samples, allTime, time.Now().Unix()))
}

// latencyDoctor is LATENCY DOCTOR: Redis's report, for the two events we
// record.
func latencyDoctor(x *Ctx) {
	x.W.Verbatim(x.srv.latencyReport(time.Now().Unix()))
}

// latencyStats is Redis's analyzeLatencyForEvent: the series' sample
// count, average and mean absolute deviation (integer ms, truncated) and
// the span from its oldest sample to now.
type latencyStats struct {
	samples, avg, mad, period int64
}

func analyzeLatency(samples []latencySample, now int64) latencyStats {
	var st latencyStats
	if len(samples) == 0 {
		return st
	}
	var sum int64
	oldest := int64(0)
	for _, sm := range samples {
		sum += sm.ms
		if oldest == 0 || sm.unix < oldest {
			oldest = sm.unix
		}
	}
	st.samples = int64(len(samples))
	st.avg = sum / st.samples
	st.period = max(now-oldest, 0)
	if st.period == 0 {
		st.period = 1
	}
	sum = 0
	for _, sm := range samples {
		d := st.avg - sm.ms
		if d < 0 {
			d = -d
		}
		sum += d
	}
	st.mad = sum / st.samples
	return st
}

// latencyReport builds LATENCY DOCTOR's text with Redis's wording.
func (s *Server) latencyReport(now int64) string {
	threshold := s.obs.latencyThreshold.Load()
	t := &s.obs.latency
	t.mu.Lock()
	names := t.sortedEvents()
	type ev struct {
		name    string
		samples []latencySample
		max     int64
	}
	evs := make([]ev, len(names))
	for i, n := range names {
		evs[i] = ev{n, t.events[n].ordered(), t.events[n].max}
	}
	t.mu.Unlock()
	if len(evs) == 0 && threshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	var b strings.Builder
	advices := 0
	var slowlogEnable, slowlogTune, slowlogInspect, largeObjects, scheduler, thp bool
	slowThreshold := s.obs.slowlogThreshold.Load()
	for i, e := range evs {
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		st := analyzeLatency(e.samples, now)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			i+1, e.name, st.samples, st.avg, st.mad, float64(st.period)/float64(st.samples), e.max)
		switch strings.ToLower(e.name) {
		case "command":
			if slowThreshold < 0 {
				slowlogEnable = true
				advices++
			} else if slowThreshold/1000 > threshold {
				slowlogTune = true
				advices++
			}
			slowlogInspect, largeObjects = true, true
			advices += 2
		case "fast-command":
			scheduler = true
			advices++
		}
		b.WriteByte('\n')
	}
	if anonHugePages() > 0 {
		thp = true
		advices++
	}
	switch {
	case len(evs) == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case len(evs) > 0 && advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		if slowlogEnable {
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", threshold*1000)
		}
		if slowlogTune {
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", threshold*1000)
		}
		if slowlogInspect {
			b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		}
		if scheduler {
			b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
				"  1) Lower the system load.\n" +
				"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
				"  3) Check if you have a \"noisy neighbour\" problem.\n" +
				"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
				"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
		}
		if largeObjects {
			b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
		}
		if thp {
			b.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n")
		}
	}
	return b.String()
}

// anonHugePages is the process's AnonHugePages in bytes, which Redis's
// doctor warns about; 0 where /proc does not say.
func anonHugePages() int64 {
	data, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// latencyHistogram is LATENCY HISTOGRAM [command ...]: for each command
// (and subcommand of a container named) that has a histogram, its calls and
// the cumulative count at each of Redis's reporting boundaries, in µs.
// Unknown names are skipped, as in Redis.
func latencyHistogram(x *Ctx) {
	var cmds []*Command
	if len(x.Args) == 2 {
		cmds = allCommands()
	} else {
		for _, a := range x.Args[2:] {
			c := lookupFullName(a)
			if c == nil {
				continue
			}
			cmds = append(cmds, c)
			if c.Sub != nil {
				cmds = append(cmds, sortedSubcommands(c)...)
			}
		}
	}
	type entry struct {
		name string
		cdf  [][2]int64
		n    int64
	}
	var out []entry
	for _, c := range cmds {
		h := x.srv.statsOf(c).latency.Load()
		if h == nil {
			continue
		}
		cdf, n := h.redisCDF()
		out = append(out, entry{c.Name, cdf, n})
	}
	x.W.Map(len(out))
	for _, e := range out {
		x.W.BulkString(e.name)
		x.W.Map(2)
		x.W.BulkString("calls")
		x.W.Int(e.n)
		x.W.BulkString("histogram_usec")
		x.W.Map(len(e.cdf))
		for _, p := range e.cdf {
			x.W.Int(p[0])
			x.W.Int(p[1])
		}
	}
}

// redisCDF reports the histogram as Redis's fillCommandCDF: HdrHistogram's
// logarithmic iteration from 1024 ns doubling, where each step's key is the
// highest value HdrHistogram (2 significant digits) counts as equal to
// 1024·2^k ns, in µs, and its value the cumulative count up to it. Steps
// that add nothing are left out. Our buckets are 1/64 wide, HdrHistogram's
// 1/128, so a count exactly at a step's edge may land one step later.
func (h *latencyHist) redisCDF() ([][2]int64, int64) {
	var counts [latencyBuckets]int64
	total := int64(0)
	for i := range counts {
		counts[i] = h.counts[i].Load()
		total += counts[i]
	}
	var out [][2]int64
	seen, prev := int64(0), int64(0)
	i := 0
	for k := 0; seen < total && k < 40; k++ {
		edge := uint64(1024)<<k + uint64(8)<<k - 1
		for i < latencyBuckets {
			_, hi := latencyBucketRange(i)
			if hi > edge {
				break
			}
			seen += counts[i]
			i++
		}
		if i == latencyBuckets {
			seen = total
		}
		if seen > prev {
			out = append(out, [2]int64{int64(edge / 1000), seen})
		}
		prev = seen
	}
	return out, total
}

func latencyHelp(x *Ctx) {
	writeHelp(x, "LATENCY", strings.Split(`DOCTOR
    Return a human readable latency analysis report.
GRAPH <event>
    Return an ASCII latency graph for the <event> class.
HISTORY <event>
    Return time-latency samples for the <event> class.
LATEST
    Return the latest latency samples for all events.
RESET [<event> ...]
    Reset latency data of one or more <event> classes.
    (default: reset all data for all event classes)
HISTOGRAM [COMMAND ...]
    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.
    If no commands are specified then all histograms are replied.`, "\n"))
}

// renderLatencyGraph draws LATENCY GRAPH's text: a header line, 80 dashes,
// then the samples as a 4-row filled sparkline (80 columns per block) with
// each sample's age ("12s", "3m", "2h", "1d") written downwards below it,
// as Redis's sparkline renderer lays them out.
func renderLatencyGraph(event string, samples []latencySample, allTime, now int64) string {
	const cols, rows = 80, 4
	var lo, hi int64
	vals := make([]float64, len(samples))
	labels := make([]string, len(samples))
	for i, sm := range samples {
		if i == 0 {
			lo, hi = sm.ms, sm.ms
		}
		lo, hi = min(lo, sm.ms), max(hi, sm.ms)
		vals[i] = float64(sm.ms)
		switch age := now - sm.unix; {
		case age < 60:
			labels[i] = strconv.FormatInt(age, 10) + "s"
		case age < 3600:
			labels[i] = strconv.FormatInt(age/60, 10) + "m"
		case age < 86400:
			labels[i] = strconv.FormatInt(age/3600, 10) + "h"
		default:
			labels[i] = strconv.FormatInt(age/86400, 10) + "d"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, allTime)
	b.WriteString(strings.Repeat("-", cols) + "\n")
	for j := 0; j < len(vals); j += cols {
		if j != 0 {
			b.WriteByte('\n')
		}
		end := min(j+cols, len(vals))
		sparkline(&b, vals[j:end], labels[j:end], float64(lo), float64(hi), rows)
	}
	return b.String()
}

// sparkline renders one block of a filled sparkline whose scale spans
// [lo, hi] of the whole sequence.
func sparkline(b *strings.Builder, vals []float64, labels []string, lo, hi float64, rows int) {
	const fill = "_o#"
	steps := len(fill) * rows
	rel := hi - lo
	if rel == 0 {
		rel = 1
	}
	chars := make([]byte, len(vals))
	for row := 0; ; row++ {
		more := false
		for j := range chars {
			chars[j] = ' '
		}
		for j, v := range vals {
			step := int(float64(int((v-lo)*float64(steps))) / rel)
			step = min(max(step, 0), steps-1)
			if row < rows {
				more = true
				idx := step - (rows-row-1)*len(fill)
				if idx >= 0 && idx < len(fill) {
					chars[j] = fill[idx]
				} else if idx >= len(fill) {
					chars[j] = '|'
				}
				continue
			}
			if row-rows < 1 { // one blank line above the labels
				more = true
				break
			}
			if k := row - rows - 1; k < len(labels[j]) {
				more = true
				chars[j] = labels[j][k]
			}
		}
		if !more {
			return
		}
		b.Write(chars)
		b.WriteByte('\n')
	}
}
