package integration_test

import (
	"net"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// cli runs redis-cli against addr with args and returns its output.
func cli(t *testing.T, addr string, stdin string, args ...string) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-cli", append([]string{"-h", host, "-p", port}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestRedisCli drives redis-cli one-shot, from a piped session, with -n and
// with --scan, against both servers: the output must be the same.
func TestRedisCli(t *testing.T) {
	requirePeer(t, "redis-cli")
	s := sharedServers(t)
	newPair(t) // FLUSHALL both
	runs := []struct {
		stdin string
		args  []string
	}{
		{"", []string{"PING"}},
		{"", []string{"SET", "greeting", "hello world"}},
		{"", []string{"GET", "greeting"}},
		{"", []string{"--no-raw", "GET", "missing"}},
		{"", []string{"-n", "3", "SET", "in3", "x"}},
		{"", []string{"-n", "3", "DBSIZE"}},
		{"", []string{"DBSIZE"}},
		{"", []string{"--no-raw", "INCR", "greeting"}},
		{"", []string{"--no-raw", "nosuch", "a"}},
		{"SET a 1\nINCR a\nGET a\nEXPIRE a 100\nTTL a\nDEL a\nEXISTS a\n", nil},
		{"MULTI\nSET t 1\nINCR t\nEXEC\n", nil},
		{"", []string{"-r", "3", "INCR", "rep"}},
		{"", []string{"GET", "rep"}},
	}
	for _, r := range runs {
		want := cli(t, s.redis.addr, r.stdin, r.args...)
		got := cli(t, s.cell.addr, r.stdin, r.args...)
		if got != want {
			t.Errorf("redis-cli %q (stdin %q):\nredis-server: %q\ncellserver:   %q", r.args, r.stdin, want, got)
		}
	}
	for i := 0; i < 50; i++ {
		key := "scan:" + strings.Repeat("k", i%7) + string(rune('a'+i%26)) + strings.Repeat("z", i/26)
		cli(t, s.redis.addr, "", "SET", key, "v")
		cli(t, s.cell.addr, "", "SET", key, "v")
	}
	sortedLines := func(s string) string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		sort.Strings(l)
		return strings.Join(l, "\n")
	}
	for _, args := range [][]string{{"--scan"}, {"--scan", "--pattern", "scan:k*"}, {"--scan", "--pattern", "*a*"}} {
		want := sortedLines(cli(t, s.redis.addr, "", args...))
		got := sortedLines(cli(t, s.cell.addr, "", args...))
		if got != want {
			t.Errorf("redis-cli %q:\nredis-server: %q\ncellserver:   %q", args, want, got)
		}
	}
	if info := cli(t, s.cell.addr, "", "INFO", "server"); !strings.Contains(info, "redis_version:7.0.15") {
		t.Errorf("INFO server lacks redis_version:7.0.15:\n%s", info)
	}
}

// TestRedisCliThrottle: CL.THROTTLE by hand, as an operator would.
func TestRedisCliThrottle(t *testing.T) {
	requirePeer(t, "redis-cli")
	s := sharedServers(t)
	if selfTest() {
		t.Skip("redis-server has no CL.THROTTLE")
	}
	newPair(t)
	got := cli(t, s.cell.addr, "", "CL.THROTTLE", "user123", "15", "30", "60")
	if got != "0\n16\n15\n-1\n2\n" {
		t.Errorf("CL.THROTTLE via redis-cli: %q", got)
	}
	if got := cli(t, s.cell.addr, "", "--no-raw", "CL.THROTTLE", "user123", "15", "30", "60"); got != "1) (integer) 0\n2) (integer) 16\n3) (integer) 14\n4) (integer) -1\n5) (integer) 4\n" {
		t.Errorf("CL.THROTTLE via redis-cli --no-raw: %q", got)
	}
}

const redisPyScript = `
import sys, redis
host, port = sys.argv[1], int(sys.argv[2])
r = redis.Redis(host=host, port=port)
out = []
out.append(r.ping())
out.append(r.set("k", b"v\x00\r\n"))
out.append(r.get("k"))
out.append(r.incr("n"))
out.append(r.incrby("n", 41))
out.append(r.set("w", 1, ex=100, nx=True))
out.append(r.set("w", 1, ex=100, nx=True))
out.append(r.ttl("w"))
out.append(r.exists("k", "n", "zz"))
p = r.pipeline(transaction=True)
p.incr("ctr"); p.expire("ctr", 60, nx=True); p.incr("ctr"); p.get("ctr")
out.append(p.execute())
p = r.pipeline(transaction=False)
for i in range(5):
    p.set("p%d" % i, i)
p.mget(["p0", "p3", "nope"])
out.append(p.execute())
try:
    r.incr("k")
except redis.ResponseError as e:
    out.append(("error", str(e)))
out.append(sorted(r.keys("p*")))
out.append(r.delete("p0", "p1", "nope"))
out.append(r.dbsize())
out.append(r.echo("hi"))
for line in out:
    print(repr(line))
`

// TestRedisPy runs the same redis-py session (Debian's python3-redis,
// RESP2) against both servers.
func TestRedisPy(t *testing.T) {
	python := debianPython(t)
	s := sharedServers(t)
	newPair(t)
	run := func(addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		out, err := exec.Command(python, "-c", redisPyScript, host, port).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-py against %s: %v\n%s", addr, err, out)
		}
		return string(out)
	}
	want, got := run(s.redis.addr), run(s.cell.addr)
	if got != want {
		t.Errorf("redis-py session differs:\n%s", describeDiff("redis-server", []byte(want), "cellserver", []byte(got)))
	}
}

// debianPython finds a python3 that can import redis: Debian's
// /usr/bin/python3 with python3-redis first, as a pyenv python3 earlier on
// the PATH usually lacks the module.
func debianPython(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		if exec.Command(p, "-c", "import redis").Run() == nil {
			return p
		}
	}
	requirePeer(t, "python3-redis-module")
	return ""
}

// TestClientPausedInList: a client held by CLIENT PAUSE WRITE shows in
// CLIENT LIST as blocked (flags=b) with its held command (cmd=set) on
// both servers, and its write runs after CLIENT UNPAUSE. (CLIENT UNBLOCK
// of such a client aborts redis-server 7.0.15, so it is not sent here.)
func TestClientPausedInList(t *testing.T) {
	s := startServers(t, serverOptions{})
	fields := regexp.MustCompile(`\b(flags|cmd)=\S+`)
	var views [2]string
	for i, p := range []*process{s.redis, s.cell} {
		admin, err := dialRESP(p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		held, err := dialRESP(p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		r, _ := held.Do("CLIENT", "ID")
		id := strings.TrimSpace(strings.TrimPrefix(string(r), ":"))
		admin.Do("CLIENT", "PAUSE", "10000", "WRITE")
		if err := held.Send("SET", "paused:k", "v"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			r, err := admin.Do("CLIENT", "LIST", "ID", id)
			if err != nil {
				t.Fatalf("%s: CLIENT LIST: %v", p.name, err)
			}
			views[i] = strings.Join(fields.FindAllString(string(r), -1), " ")
			if strings.Contains(views[i], "flags=b") || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		admin.Do("CLIENT", "UNPAUSE")
		if r, err := held.ReadReply(); err != nil || string(r) != "+OK\r\n" {
			t.Errorf("%s: the held SET after UNPAUSE: %q %v", p.name, r, err)
		}
	}
	if views[0] != views[1] || views[0] != "flags=b cmd=set" {
		t.Errorf("CLIENT LIST of a paused client: redis-server %q, cellserver %q", views[0], views[1])
	}
}
