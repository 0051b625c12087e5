package cell

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/resp"
)

// batchSource hands out one pipeline of requests per Read, in turn.
type batchSource struct {
	batches [][]byte
	i       int
}

func (s *batchSource) Read(p []byte) (int, error) {
	b := s.batches[s.i%len(s.batches)]
	s.i++
	return copy(p, b), nil
}

// BenchmarkNativePipeline runs a native script as the bench's depth-16
// rows send it (16 EVALSHAs per read, random keys among 100,000), through
// what the poller's callback does with one read: the reader's parse, the
// key hints (prefetchKeys), dispatch and the batch's end (runBuffered),
// without the network. cpu-ns/op is the process's CPU per call: the
// server side of a call at depth 16 but for the sockets.
func BenchmarkNativePipeline(b *testing.B) {
	const depth, nkeys, nbatches = 16, 100_000, 4096
	cases := []struct {
		name, body string
		key        func(i int) string
		argv       func(batch int) []string
	}{
		{"ulule", ululeBodies(b)[0], func(i int) string { return "rl:" + strconv.Itoa(i) + ":ulule" },
			func(int) []string { return []string{"1", "60000"} }},
		{"redis_rate", redisRateBodies(b)[0], func(i int) string { return "rl:" + strconv.Itoa(i) + ":rr" },
			func(int) []string { return []string{"10", "10", "1", "1"} }},
		{"w2", readBody(b, "../bench/window.lua"), func(i int) string { return "limit:" + strconv.Itoa(i) + ":w2" },
			func(batch int) []string {
				now := int64(1700000000000 + batch) // a millisecond per batch
				return []string{strconv.FormatInt(now, 10), strconv.FormatInt(now-60000, 10), "60"}
			}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			srv := New(cfg)
			c, peer := pipeClient(srv)
			defer peer.Close()
			defer c.close()
			if _, err := srv.scripts.Load([]byte(tc.body)); err != nil {
				b.Fatal(err)
			}
			sha := script.SHA1Hex([]byte(tc.body))
			request := func(dst []byte, key string, batch int) []byte {
				return append(dst, encode(append([]string{"EVALSHA", sha, "1", key}, tc.argv(batch)...)...)...)
			}
			run := func(src *batchSource, n int) {
				c.rd = resp.NewReader(src, resp.Limits{})
				for range n {
					if err := c.rd.Fill(); err != nil {
						b.Fatal(err)
					}
					c.prefetchKeys()
					for c.runBuffered() {
						// A shard held elsewhere (the expiry cycle): the
						// ordinary loop runs the command, as serve's would.
						args, ok, err := c.next()
						if !ok || err != nil {
							b.Fatalf("the batch left the callback: %v", err)
						}
						c.run(args)
					}
					c.tally.flush(c)
					c.clock.idle()
					c.w.Reset()
				}
			}
			// Every key once first, as the bench's warm-up leaves them.
			var warm batchSource
			for i := 0; i < nkeys; i += depth {
				var batch []byte
				for j := i; j < i+depth && j < nkeys; j++ {
					batch = request(batch, tc.key(j), 0)
				}
				warm.batches = append(warm.batches, batch)
			}
			run(&warm, len(warm.batches))
			rng := rand.New(rand.NewPCG(1, 2))
			var src batchSource
			for i := range nbatches {
				var batch []byte
				for range depth {
					batch = request(batch, tc.key(rng.IntN(nkeys)), i+1)
				}
				src.batches = append(src.batches, batch)
			}
			b.ReportAllocs()
			b.ResetTimer()
			c0 := processCPU()
			run(&src, (b.N+depth-1)/depth)
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
