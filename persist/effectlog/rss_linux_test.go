//go:build linux

package effectlog

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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
			// The prefault goroutine may still be catching up with the
			// appends (on a busy machine): the bound below is about the
			// log at rest.
			for {
				l.mu.Lock()
				busy := l.populating
				l.mu.Unlock()
				if !busy {
					break
				}
				time.Sleep(time.Millisecond)
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

// allocatedBytes is the disk the file at path takes (its blocks).
func allocatedBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestSegmentBlocksFollowWrites: a segment takes the disk of what was
// written to it plus a few chunks ahead, not its whole size; a disk that
// cannot give the next chunk fails Append, never a store into the mapping.
func TestSegmentBlocksFollowWrites(t *testing.T) {
	dir := t.TempDir()
	var full atomic.Bool
	l, err := Open(dir, Options{SegmentSize: 64 << 20, Fault: func(op string) error {
		if op == "create" && full.Load() {
			return syscall.ENOSPC
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	path := l.cur.path
	if n := allocatedBytes(t, path); n > 2*allocChunk {
		t.Fatalf("a new segment takes %d bytes", n)
	}
	p := make([]byte, 4000)
	for l.End() < 20<<20 {
		mustAppend(t, l, p)
	}
	if n := allocatedBytes(t, path); n < 20<<20 || n > 20<<20+3*allocChunk {
		t.Fatalf("after 20 MB of records the segment takes %d bytes", n)
	}
	// The disk fills: Append fails once it reaches the blocks reserved
	// before (the background allocation usually reports the error
	// earlier), and Err says why.
	full.Store(true)
	var appendErr error
	for appendErr == nil && l.End() < 64<<20 {
		_, appendErr = l.Append(p)
	}
	if appendErr == nil {
		t.Fatal("Append went on writing past the reserved blocks")
	}
	if l.Err() == nil {
		t.Fatal("no error reported with the disk full")
	}
	full.Store(false)
	for range 2000 {
		if _, err := l.Append(p); err != nil {
			t.Fatalf("Append once the disk works: %v", err)
		}
	}
	if err := l.Err(); err != nil {
		t.Fatalf("Err once the disk works: %v", err)
	}
	if err := l.Sync(l.End()); err != nil {
		t.Fatal(err)
	}
}
