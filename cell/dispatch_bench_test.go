package cell

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkDispatchSetGet is the command path of SET and GET on one
// connection, without the network: what cluster mode's check must not slow
// down when it is off.
func BenchmarkDispatchSetGet(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	set := [][]byte{[]byte("SET"), []byte("rate:user:1234"), []byte("17")}
	get := [][]byte{[]byte("GET"), []byte("rate:user:1234")}
	for b.Loop() {
		c.dispatch(set)
		c.dispatch(get)
		c.w.Reset()
	}
}

// BenchmarkDispatchSetGetCluster is the same on a cluster node that owns
// the key: the slot is computed in dispatch and again to find the shard.
func BenchmarkDispatchSetGetCluster(b *testing.B) {
	top, err := ParseTopology("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1 127.0.0.1:7001 myself - 0 0 1 connected 0-16383\n", SelfHint{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := fuzzConfig()
	cfg.Cluster = top
	srv := New(cfg)
	c, peer := pipeClient(srv)
	defer peer.Close()
	set := [][]byte{[]byte("SET"), []byte("rate:user:1234"), []byte("17")}
	get := [][]byte{[]byte("GET"), []byte("rate:user:1234")}
	for b.Loop() {
		c.dispatch(set)
		c.dispatch(get)
		c.w.Reset()
	}
}

// BenchmarkDispatchPing is the fixed cost of a command: dispatch's checks,
// the clock reads and the stats that record keeps.
func BenchmarkDispatchPing(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	ping := [][]byte{[]byte("PING")}
	for b.Loop() {
		c.dispatch(ping)
		c.w.Reset()
	}
}

// BenchmarkDispatchThrottle is CL.THROTTLE on one existing key: the stored
// TAT is parsed and rewritten on every call.
func BenchmarkDispatchThrottle(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	th := [][]byte{[]byte("CL.THROTTLE"), []byte("rate:user:1234"), []byte("1000000"), []byte("1000000"), []byte("1")}
	for b.Loop() {
		c.dispatch(th)
		c.w.Reset()
	}
}

// BenchmarkRunPing is PING with what serve does around every command
// (run): the running flag, CLIENT REPLY, CLIENT LIST's copy.
func BenchmarkRunPing(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	ping := [][]byte{[]byte("PING")}
	for b.Loop() {
		c.run(ping)
		c.w.Reset()
	}
}

// BenchmarkDispatchThrottleKeys is CL.THROTTLE over 100,000 existing keys,
// as the bench's throttle workload: each call misses the caches. One unit
// per 10^6 s keeps every key alive for the whole run.
func BenchmarkDispatchThrottleKeys(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	const n = 100000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("rate:user:" + strconv.Itoa(i))
	}
	th := [][]byte{[]byte("CL.THROTTLE"), nil, []byte("1000000"), []byte("1"), []byte("1000000")}
	for _, k := range keys {
		th[1] = k
		c.dispatch(th)
		c.w.Reset()
	}
	i := 0
	for b.Loop() {
		th[1] = keys[i%n]
		i++
		c.dispatch(th)
		c.w.Reset()
	}
}

// BenchmarkDispatchW1 is the bench's W1 block (MULTI ZADD ZREMRANGEBYSCORE
// ZCARD EXPIRE EXEC) over 10,000 windows: queueing, EXEC and the sorted
// set commands; under everysec also the block's effect-log record (its
// encoding, the append), without checkpoints.
func BenchmarkDispatchW1(b *testing.B) {
	b.Run("off", func(b *testing.B) { benchW1(b, New(fuzzConfig())) })
	b.Run("everysec", func(b *testing.B) {
		srv, _ := openServer(b, b.TempDir(), func(c *Config) {
			c.AppendFsync = FsyncEverySec
			manualCheckpoints(c)
		})
		benchW1(b, srv)
	})
}

func benchW1(b *testing.B, srv *Server) {
	c, peer := pipeClient(srv)
	defer peer.Close()
	const n = 10000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("limit:" + strconv.Itoa(i) + ":w1")
	}
	multi := [][]byte{[]byte("MULTI")}
	exec := [][]byte{[]byte("EXEC")}
	zadd := [][]byte{[]byte("ZADD"), nil, nil, nil}
	zrem := [][]byte{[]byte("ZREMRANGEBYSCORE"), nil, []byte("0"), nil}
	zcard := [][]byte{[]byte("ZCARD"), nil}
	expire := [][]byte{[]byte("EXPIRE"), nil, []byte("60")}
	block := [][][]byte{multi, zadd, zrem, zcard, expire, exec}
	var tsBuf, minBuf [20]byte
	now := int64(1_700_000_000_000)
	i := 0
	for b.Loop() {
		k := keys[i%n]
		i++
		now++
		ts := strconv.AppendInt(tsBuf[:0], now, 10)
		zadd[1], zadd[2], zadd[3] = k, ts, ts
		zrem[1], zrem[3] = k, strconv.AppendInt(minBuf[:0], now-60000, 10)
		zcard[1], expire[1] = k, k
		for _, cmd := range block {
			c.dispatch(cmd)
		}
		c.w.Reset()
	}
}

// BenchmarkPingParallel is PING from one client per core in batches of 16,
// as a pipelined load runs it: what the cores share per command (the stats
// counters) shows here and not in the one-client benchmarks.
func BenchmarkPingParallel(b *testing.B) {
	runParallel(b, func(int) [][]byte { return [][]byte{[]byte("PING")} })
}

// BenchmarkThrottleParallel is the same with CL.THROTTLE, each client on
// its own key: the keyspace shards are not shared, the counters are.
func BenchmarkThrottleParallel(b *testing.B) {
	runParallel(b, func(i int) [][]byte {
		return [][]byte{[]byte("CL.THROTTLE"), []byte("user:" + strconv.Itoa(i)), []byte("1000000"), []byte("1"), []byte("1000000")}
	})
}

// runParallel runs the command cmd(i) gives from one client i per
// goroutine, in batches of 16.
func runParallel(b *testing.B, cmd func(i int) [][]byte) {
	srv := New(fuzzConfig())
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		c, peer := pipeClient(srv)
		defer peer.Close()
		args := cmd(int(next.Add(1)))
		for n := 0; pb.Next(); n++ {
			c.run(args)
			if n%16 == 15 { // the end of a batch, without the pipe's write
				c.tally.flush(c)
				c.w.Reset()
			}
		}
	})
}

// BenchmarkDispatchWindowKeys is CL.WINDOW over 100,000 keys, as the
// bench's window workload (60 in 60 s), beside GET over as many string
// keys: what a CL.WINDOW decision costs above a plain read.
func BenchmarkDispatchWindowKeys(b *testing.B) {
	const n = 100000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("limit:" + strconv.Itoa(i) + ":win")
	}
	for _, bc := range []struct {
		name string
		cmd  [][]byte
		init [][]byte
	}{
		{"window", [][]byte{[]byte("CL.WINDOW"), nil, []byte("60"), []byte("60000")}, nil},
		{"get", [][]byte{[]byte("GET"), nil}, [][]byte{[]byte("SET"), nil, []byte("17")}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := New(fuzzConfig())
			c, peer := pipeClient(srv)
			defer peer.Close()
			init := bc.init
			if init == nil {
				init = bc.cmd
			}
			for _, k := range keys {
				init[1] = k
				c.dispatch(init)
				c.w.Reset()
			}
			i := 0
			for b.Loop() {
				bc.cmd[1] = keys[i%n]
				i++
				c.dispatch(bc.cmd)
				c.w.Reset()
			}
		})
	}
}

// BenchmarkDispatchWindowLong is CL.WINDOW on 100 keys of about 1,000
// events each (a call a ms, each key's every 100 ms, a 100 s window):
// each call drops the oldest event of its key and adds one.
func BenchmarkDispatchWindowLong(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	const n = 100
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("limit:" + strconv.Itoa(i) + ":win")
	}
	cmd := [][]byte{[]byte("CL.WINDOW"), nil, []byte("5000"), []byte("100000")}
	now := time.Now().Add(time.Hour).UnixMilli()
	call := func(i int) {
		srv.limiters.fixedNow.Store(now * int64(time.Millisecond))
		now++
		cmd[1] = keys[i%n]
		c.dispatch(cmd)
		c.w.Reset()
	}
	for i := range 100 * 1000 {
		call(i)
	}
	i := 0
	for b.Loop() {
		call(i)
		i++
	}
}
