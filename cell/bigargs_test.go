package cell

import (
	"bytes"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// liveHeap is the Go heap in use after a collection: what is reachable.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// totalAlloc is every byte the process has allocated so far.
func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// selfRSS is this process's resident memory from /proc, or 0 when that
// is not available.
func selfRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestBigArgMemory: a 64 MB SET allocates about the argument's size once
// (read into a buffer of its own, kept as the value), three unfinished
// 64 MB uploads hold about their size each, and closing them gives that
// memory back, to the heap and to the system.
func TestBigArgMemory(t *testing.T) {
	const size = 64 << 20
	srv := startServer(t, nil)
	val := bytes.Repeat([]byte("v"), size) // the client's side, before every baseline
	header := []byte("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(size) + "\r\n")
	c := dial(t, srv)

	base, before := liveHeap(), totalAlloc()
	c.nc.Write(header)
	c.nc.Write(val)
	c.nc.Write([]byte("\r\n"))
	if got := c.read(); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	if got := totalAlloc() - before; got > size*12/10 {
		t.Errorf("a %d MB SET allocated %d MB", size>>20, got>>20)
	}
	if got := int64(liveHeap() - base); got > size*11/10 {
		t.Errorf("the %d MB value holds %d MB of heap", size>>20, got>>20)
	}
	if got := c.do("STRLEN", "big"); got != ":"+strconv.Itoa(size)+"\r\n" {
		t.Fatalf("STRLEN: %q", got)
	}
	c.do("DEL", "big")

	base, rss := liveHeap(), selfRSS()
	sent := size - 1<<20
	var uploads []net.Conn
	for range 3 {
		nc, err := net.Dial("tcp", srv.Addrs()[0].String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.Write(header)
		nc.Write(val[:sent])
		uploads = append(uploads, nc)
	}
	// The writes return once the bytes are in the socket buffers: wait
	// until the server has read nearly all of them.
	var held int64
	for deadline := time.Now().Add(20 * time.Second); ; {
		held = int64(liveHeap() - base)
		if held >= 3*int64(sent)-8<<20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if held > 3*size*12/10 || held < 3*int64(sent)-8<<20 {
		t.Errorf("three unfinished %d MB uploads hold %d MB of heap", size>>20, held>>20)
	}
	for _, nc := range uploads {
		nc.Close()
	}
	// No collection forced here: the server must give the memory back by
	// itself, as an idle server that allocates nothing would have to.
	rssAfter := selfRSS()
	for deadline := time.Now().Add(10 * time.Second); rssAfter >= rss+32<<20 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		rssAfter = selfRSS()
	}
	// Each upload's connection lets go of its buffer once it has seen
	// the close, which a loaded machine may take a while to schedule.
	heapAfter := int64(liveHeap() - base)
	for deadline := time.Now().Add(10 * time.Second); heapAfter >= 4<<20 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		heapAfter = int64(liveHeap() - base)
	}
	if heapAfter >= 4<<20 {
		t.Errorf("after the uploads closed, %d MB of heap stay", heapAfter>>20)
	}
	if rss != 0 && rssAfter >= rss+32<<20 {
		t.Errorf("after the uploads closed, RSS is %d MB above its level before them", (rssAfter-rss)>>20)
	}
	runtime.KeepAlive(val) // part of every baseline: it must not be collected before the end
}
