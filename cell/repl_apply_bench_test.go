package cell

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recordStream attaches a fake replica to a fresh in-process master, runs
// the requests gen makes for writes 0..n-1 on it (pipelined; gen says
// how many replies each gets), and returns the stream the master sent
// after the snapshot, and the master.
func recordStream(tb testing.TB, n int, gen func(b []byte, i int) ([]byte, int)) ([]byte, *Server) {
	tb.Helper()
	srv := startServer(tb, nil)
	r := fakeReplica(tb, srv)
	c := dial(tb, srv)
	const batch = 256
	var buf []byte
	for i := 0; i < n; i += batch {
		buf = buf[:0]
		replies := 0
		for j := range min(batch, n-i) {
			var r int
			buf, r = gen(buf, i+j)
			replies += r
		}
		if _, err := c.nc.Write(buf); err != nil {
			tb.Fatal(err)
		}
		for range replies {
			c.read()
		}
	}
	info := c.do("INFO", "replication")
	_, v, _ := strings.Cut(info, "master_repl_offset:")
	v, _, _ = strings.Cut(v, "\r")
	end, err := strconv.Atoi(v)
	if err != nil {
		tb.Fatalf("INFO replication: %q", info)
	}
	// The master queues the stream for us whatever we read meanwhile.
	stream := make([]byte, end)
	r.nc.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := io.ReadFull(r.br, stream); err != nil {
		tb.Fatal(err)
	}
	return stream, srv
}

// w1Write is bench's W1 write number i: MULTI, ZADD key now now,
// ZREMRANGEBYSCORE key 0 now-window, ZCARD key, EXPIRE key 60, EXEC, on
// one of keys keys, the clock moving perMs writes a millisecond; six
// replies.
func w1Write(keys, perMs int, windowMs int64) func([]byte, int) ([]byte, int) {
	return func(b []byte, i int) ([]byte, int) {
		key := "limit:" + strconv.Itoa((i*7919)%keys) + ":w1"
		now := 1_700_000_000_000 + int64(i/perMs)
		ns := strconv.FormatInt(now, 10)
		b = append(b, encode("MULTI")...)
		b = append(b, encode("ZADD", key, ns, ns)...)
		b = append(b, encode("ZREMRANGEBYSCORE", key, "0", strconv.FormatInt(now-windowMs, 10))...)
		b = append(b, encode("ZCARD", key)...)
		b = append(b, encode("EXPIRE", key, "60")...)
		return append(b, encode("EXEC")...), 6
	}
}

// BenchmarkReplicaApplyW1 applies a recorded W1 stream (10k windows of
// about 20 entries, each write its MULTI, ZADD, ZREM, PEXPIREAT, EXEC) on
// a replica through its master link; ns/op is per W1 write applied.
func BenchmarkReplicaApplyW1(b *testing.B) {
	const writes = 100_000
	stream, _ := recordStream(b, writes, w1Write(10_000, 100, 2000))
	for _, read := range []int{64 << 10, 200} {
		b.Run(fmt.Sprintf("reads of %d bytes", read), func(b *testing.B) { benchApply(b, stream, writes, read) })
	}
}

// fixedReads reads r n bytes at a time, as a replica reads a stream that
// comes in small pieces.
type fixedReads struct {
	r io.Reader
	n int
}

func (f *fixedReads) Read(p []byte) (int, error) { return f.r.Read(p[:min(len(p), f.n)]) }

// benchApply runs stream through a replica's apply loop b.N/writes times
// (at least once), read bytes a read, ns/op per write.
func benchApply(b *testing.B, stream []byte, writes, read int) {
	srv := startServer(b, nil)
	l, _ := testLink(b, srv)
	rounds := max(1, b.N/writes)
	cpu0 := processCPU()
	b.ResetTimer()
	for range rounds {
		err := l.applyStream(bufio.NewReaderSize(&fixedReads{bytes.NewReader(stream), read}, 16))
		if err != io.EOF {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rounds*writes), "ns/write")
	// CPU time, which other processes on a loaded machine do not inflate
	// as they do the elapsed time.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(rounds*writes), "cpu-ns/write")
}
