//go:build linux

package effectlog

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// mappingRSS is the resident kilobytes of the mapping that starts at addr,
// from /proc/self/smaps.
func mappingRSS(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo == addr
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			var kb int
			fmt.Sscanf(line, "Rss: %d kB", &kb)
			return kb
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}

// TestSyncTrimsRSS: after Sync (or Trim) the written part of the current
// segment no longer counts in the process's RSS; only the page being
// written and the prefaulted window ahead do.
func TestSyncTrimsRSS(t *testing.T) {
	for _, give := range []string{"Sync", "Trim"} {
		t.Run(give, func(t *testing.T) {
			dir := t.TempDir()
			l, _ := openLog(t, dir, 32<<20)
			addr := uintptr(unsafe.Pointer(&l.cur.data[0]))
			p := make([]byte, 4000)
			for l.End() < 12<<20 {
				mustAppend(t, l, p)
			}
			if kb := mappingRSS(t, addr); kb < 12<<10 {
				t.Fatalf("RSS of the mapping %d kB before giving back, want the 12 MB written", kb)
			}
			if give == "Sync" {
				if err := l.Sync(l.End()); err != nil {
					t.Fatal(err)
				}
			} else {
				l.Trim()
			}
			if kb, max := mappingRSS(t, addr), 2*populateChunk>>10+64; kb > max {
				t.Fatalf("RSS of the mapping %d kB after %s, want at most %d", kb, give, max)
			}
			// The pages given back still hold the records.
			n := int(l.End() / 4008)
			mustAppend(t, l, p)
			mustClose(t, l)
			l, _ = openLog(t, dir, 32<<20)
			defer l.Close()
			if got := replayAll(t, l, 0); len(got) != n+1 {
				t.Fatalf("replayed %d records after %s, want %d", len(got), give, n+1)
			}
		})
	}
}
