package cell

import (
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// TestParseBlockTimeout: seconds as a long double, rounded up to whole
// milliseconds; beyond a long long's range is negative, as on Redis's x86
// builds (probed on 7.0.15).
func TestParseBlockTimeout(t *testing.T) {
	srv := startServer(t, nil)
	tests := []struct {
		arg  string
		want time.Duration
		err  string
	}{
		{"0", 0, ""},
		{"1.5", 1500 * time.Millisecond, ""},
		{"0.0001", time.Millisecond, ""},
		{"-0.0005", 0, ""},
		{"1e3", 1000 * time.Second, ""},
		{"abc", 0, ErrTimeoutNotFloat},
		{"", 0, ErrTimeoutNotFloat},
		{" 1", 0, ErrTimeoutNotFloat},
		{"nan", 0, ErrTimeoutNotFloat},
		{"-1", 0, ErrTimeoutNegative},
		{"-0.002", 0, ErrTimeoutNegative},
		{"inf", 0, ErrTimeoutNegative},
		{"1e16", 0, ErrTimeoutNegative},
		{"1e400", 0, ErrTimeoutNegative},
	}
	for _, tc := range tests {
		x := &Ctx{srv: srv, W: resp.NewWriter()}
		got, ok := parseBlockTimeout(x, []byte(tc.arg))
		if tc.err != "" {
			if ok || string(x.W.Bytes()) != "-"+tc.err+"\r\n" {
				t.Errorf("%q: %v %v %q, want %q", tc.arg, got, ok, x.W.Bytes(), tc.err)
			}
			continue
		}
		if !ok || got != tc.want {
			t.Errorf("%q = %v %v (%q), want %v", tc.arg, got, ok, x.W.Bytes(), tc.want)
		}
	}
}

// TestBlockingPersist: the pops made for blocked clients, a BLMOVE's push
// and a SWAPDB reach the effect log: after a crash the keyspace is what
// it was.
func TestBlockingPersist(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	a, b, c := dial(t, srv), dial(t, srv), dial(t, srv)
	send := func(tc *testConn, args ...string) {
		if _, err := tc.nc.Write(encode(args...)); err != nil {
			t.Fatal(err)
		}
	}
	waitBlocked := func(n int) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if r := c.do("INFO", "clients"); strings.Contains(r, "blocked_clients:"+string(rune('0'+n))+"\r\n") {
				return
			}
		}
		t.Fatalf("never %d blocked clients", n)
	}
	send(a, "BLPOP", "jobs", "0")
	send(b, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
	waitBlocked(2)
	c.do("RPUSH", "jobs", "j1", "j2")
	c.do("RPUSH", "src", "s1", "s2")
	if r := a.read(); r != "*2\r\n$4\r\njobs\r\n$2\r\nj1\r\n" {
		t.Fatalf("BLPOP served %q", r)
	}
	if r := b.read(); r != "$2\r\ns1\r\n" {
		t.Fatalf("BLMOVE served %q", r)
	}
	send(a, "BZPOPMAX", "z", "0")
	waitBlocked(1)
	c.do("SELECT", "1")
	c.do("ZADD", "z", "1", "m1", "2", "m2")
	c.do("SWAPDB", "0", "1")
	if r := a.read(); r != "*3\r\n$1\r\nz\r\n$2\r\nm2\r\n$1\r\n2\r\n" {
		t.Fatalf("BZPOPMAX served %q", r)
	}
	want := dumpKeyspace(srv)
	if len(want) != 4 {
		t.Fatalf("keyspace: %v", want)
	}
	crashStop(srv, stop)
	srv2, _ := openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv2), want)
}
