package cell

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cellserver/cellserver/rdb"
)

// BenchmarkLoadRDB: a start that loads an RDB file of bench -rdb's shape
// (1,000,000 string keys holding a 13-digit TAT with a TTL, 100,000 sorted
// sets of ten timestamps with a TTL), into memory alone and into an empty
// store, which the load then makes durable before serving. cpu-ms/op is
// the process's CPU per start, Pebble's background work included.
func BenchmarkLoadRDB(b *testing.B) {
	file := benchRDBFile(b, 1_000_000, 100_000, 10)
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "durable"
		}
		b.Run(name, func(b *testing.B) {
			c0 := processCPU()
			for b.Loop() {
				dir := b.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644); err != nil {
					b.Fatal(err)
				}
				srv, stop := openServer(b, dir, func(c *Config) {
					manualCheckpoints(c)
					c.AppendOnly = durable
				})
				if n := srv.ks.DBSize(0); n != 1_100_000 {
					b.Fatalf("%d keys loaded", n)
				}
				crashStop(srv, stop)
			}
			b.ReportMetric(float64((processCPU()-c0)/time.Duration(b.N))/1e6, "cpu-ms/op")
		})
	}
}

// benchRDBFile writes an RDB file of keys strings and sets sorted sets of
// members timestamps each, every key with a TTL an hour away.
func benchRDBFile(b *testing.B, keys, sets, members int) []byte {
	var buf bytes.Buffer
	w := rdb.NewWriter(&buf)
	exp := time.Now().Add(time.Hour).UnixMilli()
	tat := time.Now().UnixMilli()
	w.SelectDB(0, uint64(keys+sets), uint64(keys+sets))
	v := rdb.Value{Type: rdb.TypeString}
	for i := range keys {
		v.Str = strconv.AppendInt(v.Str[:0], tat+int64(i), 10)
		if err := w.Key([]byte("user:"+strconv.Itoa(i)+":throttle"), &v, exp); err != nil {
			b.Fatal(err)
		}
	}
	z := rdb.Value{Type: rdb.TypeZSet}
	for i := range sets {
		z.Elems, z.Scores = z.Elems[:0], z.Scores[:0]
		for j := range members {
			ts := tat + int64(j)
			z.Elems = append(z.Elems, strconv.AppendInt(nil, ts, 10))
			z.Scores = append(z.Scores, float64(ts))
		}
		if err := w.Key([]byte("limit:"+strconv.Itoa(i)+":w1"), &z, exp); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
