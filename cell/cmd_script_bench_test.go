package cell

import (
	"os"
	"strconv"
	"testing"

	"github.com/cellserver/cellserver/cell/script"
)

// benchScript loads a bench/ script into srv and returns EVALSHA's
// arguments for it with one key.
func benchScript(b *testing.B, srv *Server, file string) [][]byte {
	b.Helper()
	body, err := os.ReadFile("../bench/" + file)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.scripts.Load(body); err != nil {
		b.Fatal(err)
	}
	return [][]byte{[]byte("EVALSHA"), []byte(script.SHA1Hex(body)), []byte("1"), []byte("limit:u:a")}
}

// BenchmarkEvalshaWindow is W2: the sliding window script by EVALSHA,
// through dispatch, over 1,000 keys with a 60 s window and one call per
// millisecond, so each set holds about 60 members as in the bench's w2.
func BenchmarkEvalshaWindow(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	defer c.close()
	args := append(benchScript(b, srv, "window.lua"), nil, nil, []byte("60"))
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte("limit:" + strconv.Itoa(i) + ":w2")
	}
	now := int64(1700000000000)
	b.ReportAllocs()
	for b.Loop() {
		now++
		args[3] = keys[now%int64(len(keys))]
		args[4] = strconv.AppendInt(args[4][:0], now, 10)
		args[5] = strconv.AppendInt(args[5][:0], now-60000, 10)
		c.dispatch(args)
		c.w.Reset()
	}
}

// BenchmarkEvalshaGCRA is the GCRA script by EVALSHA on one key.
func BenchmarkEvalshaGCRA(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	defer c.close()
	args := append(benchScript(b, srv, "gcra.lua"), []byte("1000000"), []byte("1000000"), []byte("1"))
	b.ReportAllocs()
	for b.Loop() {
		c.dispatch(args)
		c.w.Reset()
	}
}
