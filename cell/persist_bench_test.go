package cell

import (
	"net"
	"strconv"
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
					Handler: func(x *Ctx) { x.setString(x.Args[1], x.Args[2], 0) }}
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
	mod := func(c *Config) {
		c.Params = map[string]string{"auto-aof-rewrite-min-size": "10gb", "save": ""}
	}
	srv, stop := openServer(b, dir, mod)
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
		srv, stop := openServer(b, dir, mod)
		if srv.replayed == 0 {
			b.Fatal("nothing replayed")
		}
		crashStop(srv, stop)
	}
}
