package main

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A perf profile of a Go server is long; what a reader needs first is where
// the time goes in broad strokes (the kernel's network stack, the Go
// runtime's scheduler and collector, the clock, our own code) and then the
// few symbols on top. profileSummary reduces perf report's self-time text to
// that.

// perfSample is one line of `perf report --no-children --sort symbol`.
type perfSample struct {
	pct    float64
	kernel bool
	symbol string
}

// parsePerfReport reads the percentage lines of perf report's stdio output.
func parsePerfReport(text string) []perfSample {
	var out []perfSample
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || !strings.HasSuffix(f[0], "%") || strings.HasPrefix(f[0], "#") {
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
		if err != nil || (f[1] != "[k]" && f[1] != "[.]") {
			continue
		}
		// The symbol is the rest of the line, less perf's IPC columns.
		sym := f[2]
		out = append(out, perfSample{pct: pct, kernel: f[1] == "[k]", symbol: sym})
	}
	return out
}

// category names the broad part of the process a symbol belongs to.
func category(s perfSample) string {
	sym := s.symbol
	switch {
	case s.kernel:
		return "kernel (syscalls, TCP, scheduling)"
	case strings.Contains(sym, "clock_gettime") || strings.HasPrefix(sym, "time.now") || strings.HasPrefix(sym, "runtime.nanotime"):
		return "reading the clock"
	case strings.HasPrefix(sym, "github.com/yuin/gopher-lua"):
		return "Lua (gopher-lua)"
	case strings.HasPrefix(sym, "github.com/cellserver/cellserver/"):
		pkg := strings.TrimPrefix(sym, "github.com/cellserver/cellserver/")
		if i := strings.IndexAny(pkg, "."); i > 0 {
			pkg = pkg[:i]
		}
		return "cellserver " + pkg + "/"
	case strings.HasPrefix(sym, "runtime.map") || strings.HasPrefix(sym, "internal/runtime/maps") ||
		sym == "aeshashbody" || sym == "memeqbody":
		return "Go maps (key lookup, hashing)"
	case strings.HasPrefix(sym, "runtime.gc") || strings.HasPrefix(sym, "runtime.scan") ||
		strings.HasPrefix(sym, "runtime.mallocgc") || strings.HasPrefix(sym, "runtime.markBits") ||
		strings.HasPrefix(sym, "runtime.greyobject") || strings.HasPrefix(sym, "runtime.findObject") ||
		strings.HasPrefix(sym, "runtime.(*mspan)") || strings.HasPrefix(sym, "runtime.(*mcache)") ||
		strings.HasPrefix(sym, "runtime.(*gcWork)") || strings.HasPrefix(sym, "runtime.memclr") ||
		strings.HasPrefix(sym, "runtime.tryDeferToSpanScan") || strings.HasPrefix(sym, "runtime.sweep") ||
		strings.HasPrefix(sym, "runtime.(*sweepLocked)") || strings.HasPrefix(sym, "runtime.(*mheap)") ||
		strings.HasPrefix(sym, "runtime.typePointers") || strings.HasPrefix(sym, "runtime.(*spanInlineMarkBits)") ||
		strings.HasPrefix(sym, "runtime.bgsweep") || strings.HasPrefix(sym, "runtime.wbBuf"):
		return "Go allocation and GC"
	case strings.HasPrefix(sym, "runtime.") || strings.HasPrefix(sym, "internal/runtime/") ||
		strings.HasPrefix(sym, "internal/poll.") || strings.HasPrefix(sym, "syscall.") ||
		strings.HasPrefix(sym, "net."):
		return "Go runtime (scheduler, netpoll, syscall entry)"
	case strings.HasPrefix(sym, "sync.") || strings.HasPrefix(sym, "internal/sync."):
		return "locks (sync)"
	default:
		return "other (" + sym + ", ...)"
	}
}

// profileSummary returns "category pct" pairs, largest first, and the top
// symbols, as one markdown paragraph.
func profileSummary(name, text string, top int) string {
	samples := parsePerfReport(text)
	if len(samples) == 0 {
		return ""
	}
	byCat := map[string]float64{}
	var other float64
	for _, s := range samples {
		c := category(s)
		if strings.HasPrefix(c, "other") {
			other += s.pct
			continue
		}
		byCat[c] += s.pct
	}
	type kv struct {
		k string
		v float64
	}
	var cats []kv
	for k, v := range byCat {
		cats = append(cats, kv{k, v})
	}
	if other > 0 {
		cats = append(cats, kv{"other", other})
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i].v > cats[j].v })
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**: ", name)
	for i, c := range cats {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.0f%%", c.k, c.v)
	}
	b.WriteString(". Top symbols (self): ")
	for i, s := range samples[:min(top, len(samples))] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "`%s` %.1f%%", strings.TrimPrefix(s.symbol, "github.com/cellserver/cellserver/"), s.pct)
	}
	b.WriteString(".")
	return b.String()
}
