package cell

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// dialFrom connects to srv from a given loopback source address.
func dialFrom(t *testing.T, srv *Server, src string) *testConn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", srv.Addrs()[0].String())
	if err != nil {
		t.Skipf("cannot connect from %s (%v): this machine does not route 127.0.0.0/8 to lo", src, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &testConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// readToClose reads what the server sends until it closes the connection
// (an orderly close, or a reset when it left requests unread).
func (c *testConn) readToClose(d time.Duration) (string, bool) {
	c.nc.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c.br)
	var ne net.Error
	return string(b), err == nil || !(errors.As(err, &ne) && ne.Timeout())
}

func TestProtectedMode(t *testing.T) {
	srv := startServer(t, nil)
	// 127.0.0.2 is loopback to Linux but not "local" to Redis 7.0, which
	// compares the peer's address with "127.0.0.1" and "::1".
	remote := dialFrom(t, srv, "127.0.0.2")
	remote.nc.Write(encode("PING"))
	got, closed := remote.readToClose(5 * time.Second)
	if got != "-"+ErrProtectedMode+"\r\n" || !closed {
		t.Fatalf("remote client got %q (closed %v)", got, closed)
	}
	local := dial(t, srv)
	if r := local.do("PING"); r != "+PONG\r\n" {
		t.Fatalf("local PING: %q", r)
	}
	// A password lifts protected mode: the remote client must AUTH.
	local.do("CONFIG", "SET", "requirepass", "pw")
	remote = dialFrom(t, srv, "127.0.0.2")
	if r := remote.do("PING"); r != "-"+ErrNoAuth+"\r\n" {
		t.Errorf("remote with password: %q", r)
	}
	if r := remote.do("AUTH", "pw"); r != "+OK\r\n" {
		t.Errorf("remote AUTH: %q", r)
	}
	remote.do("CONFIG", "SET", "requirepass", "")
	// So does protected-mode no.
	if r := local.do("CONFIG", "SET", "protected-mode", "no"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET protected-mode: %q", r)
	}
	remote = dialFrom(t, srv, "127.0.0.2")
	if r := remote.do("PING"); r != "+PONG\r\n" {
		t.Errorf("remote with protected-mode no: %q", r)
	}
	if r := local.do("CONFIG", "GET", "protected-mode"); r != "*2\r\n$14\r\nprotected-mode\r\n$2\r\nno\r\n" {
		t.Errorf("CONFIG GET protected-mode: %q", r)
	}
}

func TestRenameCommand(t *testing.T) {
	srv := startServer(t, func(c *Config) {
		c.RenameCommands = [][2]string{{"FLUSHALL", ""}, {"config", "cfg-1"}, {"keys", "k"}}
	})
	c := dial(t, srv)
	if r := c.do("FLUSHALL"); !strings.HasPrefix(r, "-ERR unknown command 'FLUSHALL'") {
		t.Errorf("disabled FLUSHALL: %q", r)
	}
	if r := c.do("config", "get", "hz"); !strings.HasPrefix(r, "-ERR unknown command 'config'") {
		t.Errorf("renamed CONFIG under its old name: %q", r)
	}
	if r := c.do("CFG-1", "GET", "hz"); r != "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n" {
		t.Errorf("CONFIG under its new name: %q", r)
	}
	c.do("SET", "a", "1")
	if r := c.do("K", "*"); r != "*1\r\n$1\r\na\r\n" {
		t.Errorf("KEYS as K: %q", r)
	}
	c.do("MULTI")
	if r := c.do("k", "*"); r != "+QUEUED\r\n" {
		t.Errorf("renamed command queued: %q", r)
	}
	if r := c.do("EXEC"); r != "*1\r\n*1\r\n$1\r\na\r\n" {
		t.Errorf("EXEC: %q", r)
	}
	// Other servers in the process keep the table as it was.
	other := dial(t, startServer(t, nil))
	if r := other.do("CONFIG", "GET", "hz"); !strings.HasPrefix(r, "*2") {
		t.Errorf("rename leaked to another server: %q", r)
	}
	for _, tt := range []struct {
		pairs [][2]string
		err   string
	}{
		{[][2]string{{"nosuch", "x"}}, "No such command in rename-command"},
		{[][2]string{{"get", "set"}}, "Target command name already exists"},
		{[][2]string{{"get", "g"}, {"get", "h"}}, "No such command in rename-command"},
		{[][2]string{{"debug", ""}, {"get", ""}, {"get", ""}}, ""}, // disabling what is not there
		{[][2]string{{"get", "x"}, {"set", "get"}}, ""},
	} {
		err := CheckRenames(tt.pairs)
		if (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
			t.Errorf("%q: %v, want %q", tt.pairs, err, tt.err)
		}
	}
}

func TestIdleTimeout(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.Params = map[string]string{"timeout": "2"} })
	idle, busy := dial(t, srv), dial(t, srv)
	idle.do("PING")
	start := time.Now()
	stop := time.After(4 * time.Second)
	closedAt := time.Duration(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		idle.nc.SetReadDeadline(time.Now().Add(6 * time.Second))
		io.ReadAll(idle.nc)
		closedAt = time.Since(start)
	}()
loop:
	for {
		select {
		case <-stop:
			break loop
		case <-time.After(200 * time.Millisecond):
			if r := busy.do("PING"); r != "+PONG\r\n" {
				t.Fatalf("active client: %q", r)
			}
		}
	}
	<-done
	if closedAt < 1900*time.Millisecond || closedAt > 4*time.Second {
		t.Errorf("idle client closed after %v, want 2-3 s (checked once a second)", closedAt)
	}
	if r := busy.do("CONFIG", "GET", "timeout"); r != "*2\r\n$7\r\ntimeout\r\n$1\r\n2\r\n" {
		t.Errorf("CONFIG GET timeout: %q", r)
	}
}

func TestMaxClients(t *testing.T) {
	srv := startServer(t, nil)
	a := dial(t, srv)
	a.do("CONFIG", "SET", "maxclients", "2")
	dial(t, srv).do("PING")
	c := dial(t, srv)
	if got, closed := c.readToClose(5 * time.Second); got != "-"+ErrMaxClients+"\r\n" || !closed {
		t.Errorf("third client: %q closed %v", got, closed)
	}
}

// TestOutputBufferHardLimit: a reply past the hard limit closes the client
// instead of being sent.
func TestOutputBufferHardLimit(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	if r := c.do("CONFIG", "SET", "client-output-buffer-limit", "normal 64kb 0 0"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	c.do("SET", "big", strings.Repeat("x", 100<<10))
	c.do("SET", "small", strings.Repeat("x", 10<<10))
	if r := c.do("GET", "small"); len(r) < 10<<10 {
		t.Fatalf("small reply: %d bytes", len(r))
	}
	c.nc.Write(encode("GET", "big"))
	if got, closed := c.readToClose(5 * time.Second); got != "" || !closed {
		t.Errorf("past the hard limit: %d bytes, closed %v", len(got), closed)
	}
	if r := dial(t, srv).do("CONFIG", "GET", "client-output-buffer-limit"); !strings.Contains(r, "normal 65536 0 0 slave 268435456 67108864 60 pubsub") {
		t.Errorf("CONFIG GET: %q", r)
	}
}

// TestOutputBufferSoftLimit: a client that pipelines without reading is
// closed once its unsent replies stay above the soft limit for its
// seconds; a client that reads gets everything.
func TestOutputBufferSoftLimit(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 32kb 1")
	c.do("SET", "v", strings.Repeat("x", 10<<10))
	const n = 3000 // 30 MB of replies: more than any socket buffers
	var req []byte
	for range n {
		req = append(req, encode("GET", "v")...)
	}
	// A reader.
	go c.nc.Write(req)
	for i := range n {
		if r := c.read(); len(r) != 10<<10+10 {
			t.Fatalf("reply %d: %d bytes", i, len(r))
		}
	}
	// A client that never reads.
	stuck := dial(t, srv)
	start := time.Now()
	go stuck.nc.Write(req)
	time.Sleep(2500 * time.Millisecond)
	got, closed := stuck.readToClose(5 * time.Second)
	if !closed || len(got) >= n*(10<<10) {
		t.Errorf("non-reading client: closed %v after %v with %d bytes", closed, time.Since(start), len(got))
	}
	if r := c.do("PING"); r != "+PONG\r\n" {
		t.Errorf("others are served: %q", r)
	}
}

// TestClientThatNeverReadsIsBounded: with Redis's default (no limit for
// normal clients) a client that never reads stops being served once the
// socket is full; the server does not buffer its replies without bound.
func TestClientThatNeverReadsIsBounded(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("SET", "v", strings.Repeat("x", 64<<10))
	stuck := dial(t, srv)
	var req []byte
	for range 100 {
		req = append(req, encode("GET", "v")...)
	}
	// Keep sending until the server stops reading: its replies are not
	// being consumed, so it cannot take more.
	sent := 0
	stuck.nc.SetWriteDeadline(time.Now().Add(3 * time.Second))
	for sent < 1<<30 {
		n, err := stuck.nc.Write(req)
		sent += n
		if err != nil {
			break
		}
	}
	if sent >= 1<<30 {
		t.Fatalf("server kept reading %d bytes of requests without its replies being read", sent)
	}
	// The replies it holds are a batch, not one per request sent: sent
	// requests would be (sent/len(GET v)) * 64 KiB of replies.
	if r := c.do("PING"); r != "+PONG\r\n" {
		t.Errorf("others are served: %q", r)
	}
}

func TestMaxmemoryNoEviction(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("SET", "a", "1")
	c.do("CONFIG", "SET", "maxmemory", "1")
	defer c.do("CONFIG", "SET", "maxmemory", "0")
	for _, cmd := range [][]string{{"SET", "b", "1"}, {"INCR", "a"}, {"APPEND", "a", "x"}, {"HSET", "h", "f", "v"}, {"RPUSH", "l", "x"}} {
		if r := c.do(cmd...); r != "-"+ErrOOM+"\r\n" {
			t.Errorf("%q: %q", cmd, r)
		}
	}
	for _, tt := range []struct{ cmd, want string }{{"GET a", "$1\r\n1\r\n"}, {"EXPIRE a 100", ":1\r\n"}, {"DEL a", ":1\r\n"}} {
		if r := c.do(strings.Fields(tt.cmd)...); r != tt.want {
			t.Errorf("%q: %q, want %q", tt.cmd, r, tt.want)
		}
	}
	if r := c.do("CL.THROTTLE", "lim", "5", "5", "1"); !strings.HasPrefix(r, "*5\r\n:0\r\n") {
		t.Errorf("CL.THROTTLE under maxmemory: %q", r)
	}
	// In MULTI, queueing anything is refused; EXEC then aborts.
	c.do("MULTI")
	if r := c.do("GET", "a"); r != "-"+ErrOOM+"\r\n" {
		t.Errorf("queued GET: %q", r)
	}
	if r := c.do("EXEC"); !strings.HasPrefix(r, "-EXECABORT") {
		t.Errorf("EXEC: %q", r)
	}
	if r := c.do("CONFIG", "GET", "maxmemory"); r != "*2\r\n$9\r\nmaxmemory\r\n$1\r\n1\r\n" {
		t.Errorf("CONFIG GET maxmemory: %q", r)
	}
}

// TestMaxmemoryEviction fills a server far past maxmemory under each
// evicting policy: writes keep succeeding and memory stays near the limit.
func TestMaxmemoryEviction(t *testing.T) {
	for _, policy := range []string{"allkeys-random", "allkeys-lru", "volatile-ttl"} {
		t.Run(policy, func(t *testing.T) {
			srv := startServer(t, nil)
			c := dial(t, srv)
			runtimeGC()
			limit := srv.UsedMemory() + 8<<20
			c.do("CONFIG", "SET", "maxmemory-policy", policy)
			c.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10))
			val := strings.Repeat("v", 1000)
			const n = 40000 // 40 MB of values, five times the room
			var batch []byte
			for i := range n {
				batch = append(batch, encode("SET", "k"+strconv.Itoa(i), val, "EX", "1000")...)
				if i%500 == 499 {
					c.nc.Write(batch)
					batch = batch[:0]
					for range 500 {
						if r := c.read(); r != "+OK\r\n" {
							t.Fatalf("write %d: %q", i, r)
						}
					}
				}
			}
			r := c.do("DBSIZE")
			keys, _ := strconv.Atoi(strings.TrimSpace(r[1:]))
			if keys >= n || keys < 1000 {
				t.Errorf("DBSIZE %d after %d writes", keys, n)
			}
			if ev := srv.ops.mem.evicted.Load(); ev == 0 {
				t.Errorf("nothing evicted")
			}
			runtimeGC()
			if used := srv.UsedMemory(); used > limit+16<<20 {
				t.Errorf("used %d MB, limit %d MB", used>>20, limit>>20)
			}
		})
	}
}

// TestMaxmemoryVolatileKeepsPersistentKeys: volatile-ttl evicts only keys
// with a TTL; with none left, deny-oom commands are refused.
func TestMaxmemoryVolatileKeepsPersistentKeys(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("SET", "persistent", "1")
	c.do("SET", "volatile", "1", "EX", "100")
	c.do("CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
	c.do("CONFIG", "SET", "maxmemory", "1")
	if r := c.do("SET", "x", "1"); r != "-"+ErrOOM+"\r\n" {
		t.Errorf("SET with nothing left to evict: %q", r)
	}
	c.do("CONFIG", "SET", "maxmemory", "0")
	if r := c.do("EXISTS", "persistent", "volatile"); r != ":1\r\n" {
		t.Errorf("EXISTS: %q", r)
	}
	if r := c.do("GET", "persistent"); r != "$1\r\n1\r\n" {
		t.Errorf("persistent key: %q", r)
	}
}

func TestShutdown(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	for _, tt := range []struct{ args, want string }{
		{"SHUTDOWN ABORT", "-" + ErrNoShutdown + "\r\n"},
		{"SHUTDOWN NOSAVE SAVE", "-" + ErrSyntax + "\r\n"},
		{"SHUTDOWN NOW ABORT", "-" + ErrSyntax + "\r\n"},
		{"SHUTDOWN FOO", "-" + ErrSyntax + "\r\n"},
	} {
		if r := c.do(strings.Fields(tt.args)...); r != tt.want {
			t.Errorf("%s: %q, want %q", tt.args, r, tt.want)
		}
	}
	c.do("MULTI")
	if r := c.do("SHUTDOWN"); r != "-"+ErrNoMulti+"\r\n" {
		t.Errorf("SHUTDOWN in MULTI: %q", r)
	}
	c.do("DISCARD")
	select {
	case <-srv.ExitRequested():
		t.Fatal("exit requested by a failed SHUTDOWN")
	default:
	}
	c.nc.Write(encode("SHUTDOWN", "NOSAVE", "now"))
	if got, closed := c.readToClose(5 * time.Second); got != "" || !closed {
		t.Errorf("SHUTDOWN replied %q, closed %v", got, closed)
	}
	select {
	case <-srv.ExitRequested():
	case <-time.After(5 * time.Second):
		t.Fatal("SHUTDOWN did not request the exit")
	}
	if m := srv.ExitMode(); m != (ShutdownMode{NoSave: true, Now: true}) {
		t.Errorf("mode %+v", m)
	}
}

// TestConfigRewriteText: lines of parameters are replaced where they
// are, doubles dropped, the rest appended after the signature; comments,
// unknown directives and rename-command stay.
func TestConfigRewriteText(t *testing.T) {
	old := "# top\nport 7000\nrename-command KEYS \"\"\n  # indented\nsave 1 1\nsave 2 2\nTIMEOUT 5\nlua-time-limit 100\nshards 8\n"
	params := []paramLines{
		{name: "port", lines: []string{"port 7001"}},
		{name: "save", lines: []string{`save ""`}, force: true},
		{name: "timeout", lines: []string{"timeout 0"}},
		{name: "busy-reply-threshold", lines: []string{"busy-reply-threshold 200"}},
		{name: "maxmemory", lines: []string{"maxmemory 1mb"}, force: true},
		{name: "hz", lines: []string{"hz 10"}},
	}
	want := "# top\nport 7001\nrename-command KEYS \"\"\n  # indented\nsave \"\"\ntimeout 0\nbusy-reply-threshold 200\nshards 8\n\n" +
		rewriteSignature + "\nmaxmemory 1mb\n"
	if got := rewriteConfigText(old, params); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// A second rewrite reuses the tail.
	again := rewriteConfigText(want, append(params, paramLines{name: "hz", lines: []string{"hz 20"}, force: true}))
	if !strings.HasSuffix(again, rewriteSignature+"\nmaxmemory 1mb\nhz 20\n") || strings.Count(again, rewriteSignature) != 1 {
		t.Errorf("second rewrite:\n%s", again)
	}
}

func TestConfigRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.conf")
	os.WriteFile(path, []byte("# mine\ntimeout 5\nrename-command KEYS \"\"\n"), 0o600)
	srv := startServer(t, func(c *Config) {
		c.ConfigFile = path
		c.Params = map[string]string{"timeout": "5"}
		c.Dir = dir
	})
	c := dial(t, srv)
	c.do("CONFIG", "SET", "timeout", "7", "maxmemory", "10mb", "requirepass", "a b")
	c.do("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 512kb 10")
	if r := c.do("CONFIG", "REWRITE"); r != "+OK\r\n" {
		t.Fatalf("CONFIG REWRITE: %q", r)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	for _, want := range []string{
		"# mine\ntimeout 7\nrename-command KEYS \"\"\n\n# Generated by CONFIG REWRITE\n",
		"\nrequirepass \"a b\"\n", "\nmaxmemory 10mb\n", "\ndir \"" + dir + "\"\n",
		"\nclient-output-buffer-limit normal 1mb 512kb 10\n", "\nsave 3600 1 300 100 60 10000\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, got)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", st.Mode().Perm())
	}
	// Without a file: Redis's error.
	other := dial(t, startServer(t, nil))
	if r := other.do("CONFIG", "REWRITE"); r != "-"+ErrNoConfigFile+"\r\n" {
		t.Errorf("no file: %q", r)
	}
	// A file that cannot be written: the reason, as strerror words it.
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if os.Getuid() != 0 {
		if r := c.do("CONFIG", "REWRITE"); r != "-"+ErrConfigRewritePrefix+"Permission denied\r\n" {
			t.Errorf("read-only dir: %q", r)
		}
	}
}

// testCerts writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all signed by the CA, into dir.
func testCerts(t *testing.T, dir string) (ca, cert, key, clientCert, clientKey string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cellserver test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	ca = write("ca.crt", "CERTIFICATE", caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) (string, string) {
		k := newKey()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalPKCS8PrivateKey(k)
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "PRIVATE KEY", kder)
	}
	cert, key = leaf(2, "server", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth)
	return
}

// startTLSServer runs a server with TLS on a free port, through Listen as
// cellserver runs it.
func startTLSServer(t *testing.T, auth string, certs [3]string) (*Server, string) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Shards = 8
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg.Params = map[string]string{"tls-port": strconv.Itoa(port), "tls-ca-cert-file": certs[0],
		"tls-cert-file": certs[1], "tls-key-file": certs[2], "tls-auth-clients": auth}
	srv := New(cfg)
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key, ccert, ckey := testCerts(t, dir)
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(ca)
	pool.AppendCertsFromPEM(pem)
	clientPair, err := tls.LoadX509KeyPair(ccert, ckey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	try := func(addr string, withCert bool) error {
		tc := &tls.Config{RootCAs: pool}
		if withCert {
			tc.Certificates = []tls.Certificate{clientPair}
		}
		rdb := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: tc, MaxRetries: -1, DialTimeout: 5 * time.Second})
		defer rdb.Close()
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			return err
		}
		if v, err := rdb.Get(ctx, "k").Result(); err != nil || v != "v" {
			t.Errorf("GET over TLS: %q %v", v, err)
		}
		r, err := rdb.Do(ctx, "CL.THROTTLE", "u", "4", "1", "60").Int64Slice()
		if err != nil || len(r) != 5 || r[0] != 0 {
			t.Errorf("CL.THROTTLE over TLS: %v %v", r, err)
		}
		return nil
	}
	_, addr := startTLSServer(t, "yes", [3]string{ca, cert, key})
	if err := try(addr, true); err != nil {
		t.Errorf("with a client certificate: %v", err)
	}
	if err := try(addr, false); err == nil {
		t.Errorf("tls-auth-clients yes accepted a client without a certificate")
	}
	// CONFIG SET applies to the next handshakes: optional lets a client
	// without a certificate in; a certificate that does not load is
	// refused and the old configuration stays.
	tc := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientPair}}
	admin := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: tc})
	defer admin.Close()
	if err := admin.ConfigSet(ctx, "tls-auth-clients", "optional").Err(); err != nil {
		t.Fatal(err)
	}
	if err := try(addr, false); err != nil {
		t.Errorf("after CONFIG SET tls-auth-clients optional: %v", err)
	}
	err = admin.ConfigSet(ctx, "tls-cert-file", filepath.Join(dir, "missing.crt")).Err()
	if err == nil || err.Error() != "ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs." {
		t.Errorf("CONFIG SET of a missing certificate: %v", err)
	}
	if v := admin.ConfigGet(ctx, "tls-cert-file").Val()["tls-cert-file"]; v != cert {
		t.Errorf("tls-cert-file after a refused SET: %q", v)
	}
	if err := try(addr, true); err != nil {
		t.Errorf("after a refused CONFIG SET: %v", err)
	}
	_, addr = startTLSServer(t, "optional", [3]string{ca, cert, key})
	if err := try(addr, false); err != nil {
		t.Errorf("tls-auth-clients optional, no certificate: %v", err)
	}
	srv, addr := startTLSServer(t, "no", [3]string{"", cert, key})
	if err := try(addr, false); err != nil {
		t.Errorf("tls-auth-clients no: %v", err)
	}
	// The plain port is not TLS; the TLS port is not plain.
	if len(srv.Addrs()) != 1 {
		t.Errorf("listeners %v, want the TLS one only (port 0)", srv.Addrs())
	}
	nc, err := net.Dial("tcp", addr)
	if err == nil {
		nc.Write(encode("PING"))
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(nc)
		nc.Close()
		if strings.Contains(string(b), "PONG") {
			t.Errorf("plain PING answered on the TLS port")
		}
	}
	// Misconfigurations fail at Listen.
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, p := range []map[string]string{
		{"tls-port": "1", "tls-cert-file": cert},
		{"tls-port": "1", "tls-cert-file": cert, "tls-key-file": key},
		{"tls-port": "1", "tls-cert-file": cert, "tls-key-file": key, "tls-auth-clients": "no", "tls-ca-cert-file": ""},
	} {
		cfg.Params = p
		if p["tls-auth-clients"] == "no" {
			cfg.Params["tls-cert-file"] = filepath.Join(dir, "missing.crt")
		}
		s := New(cfg)
		if err := s.Listen(); err == nil {
			t.Errorf("%v: Listen succeeded", p)
		}
		s.Shutdown(ctx)
	}
}

func runtimeGC() { runtime.GC() }

// TestListenBind: redis.conf's bind forms.
func TestListenBind(t *testing.T) {
	for _, tt := range []struct {
		addr   string
		listen bool
		err    bool
	}{
		{"127.0.0.1", true, false},
		{"*", true, false},
		{"-192.0.2.1", false, false}, // TEST-NET-1: not ours, optional: skipped
		{"192.0.2.1", false, true},
	} {
		ln, err := listenBind(tt.addr, 0)
		if (ln != nil) != tt.listen || (err != nil) != tt.err {
			t.Errorf("%q: listener %v err %v", tt.addr, ln != nil, err)
		}
		if ln != nil {
			ln.Close()
		}
	}
}
