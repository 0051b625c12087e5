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
