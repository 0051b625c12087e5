package cell

import (
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPersistSetCall: the cost persistence adds to one SET-like
// command run through call() (locking, handler, effect commit), without
// the network.
func BenchmarkPersistSetCall(b *testing.B) {
	for _, mode := range []string{"off", FsyncNo, FsyncEverySec} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			srv, _ := openServer(b, dir, func(c *Config) {
				c.AppendOnly = mode != "off"
				if mode != "off" {
					c.AppendFsync = mode
				}
			})
			b.RunParallel(func(pb *testing.PB) {
				a, z := net.Pipe()
				defer a.Close()
				defer z.Close()
				c := newClient(srv, a)
				cmd := &Command{Name: "test.set", Arity: 3, Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1,
					Handler: func(x *Ctx) { x.SetString(x.Args[1], x.Args[2], 0) }}
				args := [][]byte{[]byte("test.set"), nil, []byte("1700000000000000000")}
				i := 0
				for pb.Next() {
					args[1] = strconv.AppendInt(args[1][:0], int64(i%10000), 10)
					c.call(cmd, args, time.Now())
					i++
				}
			})
		})
	}
}

// BenchmarkReplay: a restart that replays an effect log of W1 window
// updates and CL.THROTTLE calls (no checkpoint since they were written).
func BenchmarkReplay(b *testing.B) {
	dir := b.TempDir()
	srv, stop := openServer(b, dir, manualCheckpoints)
	c, peer := pipeClient(srv)
	now := time.Now().UnixMilli()
	for i := range 200_000 {
		key := []byte("w:" + strconv.Itoa(i%20_000))
		ts := strconv.AppendInt(nil, now+int64(i), 10)
		c.dispatch([][]byte{[]byte("MULTI")})
		c.dispatch([][]byte{[]byte("ZREMRANGEBYSCORE"), key, []byte("-inf"), strconv.AppendInt(nil, now+int64(i)-100_000, 10)})
		c.dispatch([][]byte{[]byte("ZADD"), key, ts, ts})
		c.dispatch([][]byte{[]byte("PEXPIRE"), key, []byte("3600000")})
		c.dispatch([][]byte{[]byte("EXEC")})
		c.dispatch([][]byte{[]byte("CL.THROTTLE"), []byte("t:" + strconv.Itoa(i)), []byte("15"), []byte("30"), []byte("3600")})
		c.w.Reset()
	}
	c.close()
	peer.Close()
	size := srv.store.LogSize()
	crashStop(srv, stop)
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		srv, stop := openServer(b, dir, manualCheckpoints)
		if srv.replayed == 0 {
			b.Fatal("nothing replayed")
		}
		crashStop(srv, stop)
	}
}

// BenchmarkLoad: a restart from a snapshot with no log to replay (what a
// clean stop leaves) of 200,000 CL.THROTTLE keys and 20,000 W1 windows of
// ten timestamps, bench -restart's mix at a fifth of its size. Each
// iteration opens the server, which loads it all, and stops it without a
// save.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	srv, stop := openServer(b, dir, manualCheckpoints)
	c, peer := pipeClient(srv)
	now := time.Now().UnixMilli()
	for i := range 200_000 {
		c.dispatch([][]byte{[]byte("CL.THROTTLE"), []byte("t:" + strconv.Itoa(i)), []byte("15"), []byte("30"), []byte("3600")})
		if i%10 == 0 {
			key := []byte("w:" + strconv.Itoa(i/10))
			for j := range int64(10) {
				ts := strconv.AppendInt(nil, now+j, 10)
				c.dispatch([][]byte{[]byte("ZADD"), key, ts, ts})
			}
			c.dispatch([][]byte{[]byte("EXPIRE"), key, []byte("3600")})
		}
		c.w.Reset()
	}
	c.close()
	peer.Close()
	if err := srv.checkpoint(); err != nil {
		b.Fatal(err)
	}
	crashStop(srv, stop)
	b.ResetTimer()
	for b.Loop() {
		srv, stop := openServer(b, dir, manualCheckpoints)
		if srv.loadedKeys != 220_000 || srv.replayed != 0 {
			b.Fatalf("loaded %d keys and replayed %d records, want 220000 and 0", srv.loadedKeys, srv.replayed)
		}
		crashStop(srv, stop)
	}
}

// BenchmarkCheckpointWindows: what a checkpoint costs when every window
// changed since the last one (W1 at a high rate): each iteration slides
// each of 20,000 windows of 200 timestamps by one entry, then runs a
// checkpoint. checkpoint-cpu-ms/op is the process's CPU time per
// iteration, Pebble's background flushes and compactions included, less
// that of the slides alone.
func BenchmarkCheckpointWindows(b *testing.B) {
	const windows, entries = 20_000, 200
	srv, _ := openServer(b, b.TempDir(), manualCheckpoints)
	c, peer := pipeClient(srv)
	defer peer.Close()
	defer c.close()
	keys := make([][]byte, windows)
	for i := range keys {
		keys[i] = []byte("limit:" + strconv.Itoa(i) + ":w1")
	}
	ts := int64(1_700_000_000_000)
	slide := func() {
		for _, k := range keys {
			v := strconv.AppendInt(nil, ts, 10)
			c.dispatch([][]byte{[]byte("ZADD"), k, v, v})
			c.dispatch([][]byte{[]byte("ZREMRANGEBYSCORE"), k, []byte("-inf"), strconv.AppendInt(nil, ts-entries, 10)})
			c.w.Reset()
		}
		ts++
	}
	for range entries {
		slide()
	}
	if err := srv.checkpoint(); err != nil {
		b.Fatal(err)
	}
	cpu := processCPU
	// The slides alone, for reference.
	c0 := cpu()
	for range 10 {
		slide()
	}
	slideCPU := (cpu() - c0) / 10
	c0 = cpu()
	b.ResetTimer()
	for b.Loop() {
		slide()
		if err := srv.checkpoint(); err != nil {
			b.Fatal(err)
		}
	}
	total := (cpu() - c0) / time.Duration(b.N)
	b.ReportMetric(float64((total-slideCPU).Microseconds())/1000, "checkpoint-cpu-ms/op")
	b.ReportMetric(float64(srv.store.SnapshotSize())/1e6, "snapshot-MB")
}

// BenchmarkCheckpointRewrite measures a rewrite of a keyspace of a
// million CL.THROTTLE-like keys (an int with an expiry each): what a
// checkpoint costs when most keys changed since the last one.
func BenchmarkCheckpointRewrite(b *testing.B) {
	const keys = 1_000_000
	srv, _ := openServer(b, b.TempDir(), manualCheckpoints)
	c, peer := pipeClient(srv)
	defer peer.Close()
	defer c.close()
	for i := range keys {
		k := []byte("user:" + strconv.Itoa(i) + ":throttle")
		c.dispatch([][]byte{[]byte("SET"), k, strconv.AppendInt(nil, 1_700_000_000_000_000_000+int64(i), 10), []byte("EX"), []byte("3600")})
		c.w.Reset()
	}
	c0 := processCPU()
	b.ResetTimer()
	for b.Loop() {
		srv.ckptFull = true // a rewrite, whatever changed
		if err := srv.checkpoint(); err != nil {
			b.Fatal(err)
		}
	}
	// CPU, not wall time, is what a rewrite takes from the clients:
	// Pebble's flush of the base and its compression run beside them.
	b.ReportMetric(float64((processCPU()-c0)/time.Duration(b.N))/1e6, "cpu-ms/op")
	b.ReportMetric(float64(srv.store.SnapshotSize())/1e6, "snapshot-MB")
}

// manualCheckpoints turns off the checkpoints a log size or a save rule
// would start, so that a benchmark runs only those it asks for.
func manualCheckpoints(c *Config) {
	c.Params = map[string]string{"auto-aof-rewrite-min-size": "10gb", "save": ""}
}

// processCPU is the CPU time the process has used, all threads.
func processCPU() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
