package cell

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawConn is a connection a test's goroutines may use: errors are
// returned, never reported through t.
type rawConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, srv *Server) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", srv.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{nc: nc, br: bufio.NewReader(nc)}
}

func (c *rawConn) send(args ...string) error {
	_, err := c.nc.Write(encode(args...))
	return err
}

func (c *rawConn) read(timeout time.Duration) (string, error) {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	var sb strings.Builder
	err := readReply(c.br, &sb)
	return sb.String(), err
}

func (c *rawConn) do(args ...string) (string, error) {
	if err := c.send(args...); err != nil {
		return "", err
	}
	return c.read(10 * time.Second)
}

// replyWords are a raw reply's strings (bulk and simple), in order; nil
// for a null reply. The tests' keys and elements hold no CR, LF, '*' or
// '$' at their start.
func replyWords(raw string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(raw, "\r\n"), "\r\n") {
		if l == "" || l[0] == '*' || l[0] == '$' || l[0] == ':' {
			continue
		}
		out = append(out, strings.TrimPrefix(l, "+"))
	}
	return out
}

// waitBlockedClients waits until INFO says n clients are blocked.
func waitBlockedClients(t *testing.T, c *rawConn, n int) {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		r, err := c.do("INFO", "clients")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r, want) {
			return
		}
	}
	t.Fatalf("never %d blocked clients", n)
}

// TestBlockedFirstServedBeforeOthers: while clients are blocked on a
// list, an element pushed there goes to the first of them, as Redis
// serves them before it runs any other command: a thief popping the same
// key without blocking, from other connections and as fast as it can,
// never gets one, whether the push is a plain RPUSH, part of MULTI/EXEC
// or of a script, and whether the waiters pop, move to another shard's
// key, or pop a sorted set.
func TestBlockedFirstServedBeforeOthers(t *testing.T) {
	srv := startServer(t, nil)
	ctl := dialRaw(t, srv)
	const waiters = 24
	cases := []struct {
		name  string
		block []string // the waiters' command; its reply's last word is the element
		push  func(c *rawConn, el string) error
		steal []string
	}{
		{"RPUSH/BLPOP", []string{"BLPOP", "q", "0"},
			func(c *rawConn, el string) error { _, err := c.do("RPUSH", "q", el); return err },
			[]string{"LPOP", "q"}},
		{"MULTI/BRPOP", []string{"BRPOP", "q", "0"},
			func(c *rawConn, el string) error {
				for _, cmd := range [][]string{{"MULTI"}, {"LPUSH", "q", el}, {"EXEC"}} {
					if _, err := c.do(cmd...); err != nil {
						return err
					}
				}
				return nil
			},
			[]string{"RPOP", "q"}},
		{"EVAL/BLMOVE", []string{"BLMOVE", "q", "elsewhere", "LEFT", "RIGHT", "0"},
			func(c *rawConn, el string) error {
				_, err := c.do("EVAL", "return redis.call('RPUSH', KEYS[1], ARGV[1])", "1", "q", el)
				return err
			},
			[]string{"LPOP", "q"}},
		{"ZADD/BZPOPMIN", []string{"BZPOPMIN", "q", "0"},
			func(c *rawConn, el string) error { _, err := c.do("ZADD", "q", "1", el); return err },
			[]string{"ZPOPMIN", "q"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ctl.do("FLUSHALL"); err != nil {
				t.Fatal(err)
			}
			blocked := make([]*rawConn, waiters)
			for i := range blocked {
				blocked[i] = dialRaw(t, srv)
				if err := blocked[i].send(tc.block...); err != nil {
					t.Fatal(err)
				}
				waitBlockedClients(t, ctl, i+1) // fixes the blocking order
			}
			var stop atomic.Bool
			var stolen atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 3 {
				th := dialRaw(t, srv)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						r, err := th.do(tc.steal...)
						if err != nil {
							errs <- err
							return
						}
						if len(replyWords(r)) != 0 {
							stolen.Add(1)
						}
					}
				}()
			}
			pusher := dialRaw(t, srv)
			for i := range waiters {
				if err := tc.push(pusher, fmt.Sprintf("e%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			for i, b := range blocked {
				r, err := b.read(10 * time.Second)
				if err != nil {
					t.Fatalf("waiter %d: %v", i, err)
				}
				w := replyWords(r)
				if len(w) == 0 {
					t.Fatalf("waiter %d: %q", i, r)
				}
				el := w[len(w)-1]
				if tc.block[0] == "BZPOPMIN" {
					el = w[1]
				}
				if want := fmt.Sprintf("e%d", i); el != want {
					t.Errorf("waiter %d (in blocking order) got %q, want %q", i, el, want)
				}
			}
			stop.Store(true)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if n := stolen.Load(); n != 0 {
				t.Errorf("a non-blocking pop took %d elements pushed while clients were blocked", n)
			}
		})
	}
}

// TestBlockingConcurrentExactlyOnce: many pushers, blocking poppers on
// several keys, movers between keys and plain pops at once; every element
// pushed is delivered exactly once (or is still in a list at the end).
func TestBlockingConcurrentExactlyOnce(t *testing.T) {
	srv := startServer(t, nil)
	const pushers, perPusher = 4, 300
	keys := []string{"k1", "k2", "k3", "mid"}
	var pushing atomic.Int32
	pushing.Store(pushers)
	var mu sync.Mutex
	seen := map[string]int{}
	note := func(el string) {
		mu.Lock()
		seen[el]++
		mu.Unlock()
	}
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	// consumer runs cmd until the pushers are done and cmd times out.
	consumer := func(cmd []string, deliver bool) {
		c := dialRaw(t, srv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r, err := c.do(cmd...)
				if err != nil {
					errs <- fmt.Errorf("%v: %v", cmd, err)
					return
				}
				w := replyWords(r)
				if len(w) == 0 {
					if pushing.Load() == 0 {
						return
					}
					continue
				}
				if strings.HasPrefix(w[0], "ERR") || strings.HasPrefix(w[0], "-") {
					errs <- fmt.Errorf("%v: %s", cmd, r)
					return
				}
				if deliver {
					note(w[len(w)-1])
				}
			}
		}()
	}
	for range 6 {
		consumer([]string{"BLPOP", "k1", "k2", "k3", "mid", "0.2"}, true)
	}
	consumer([]string{"BRPOP", "mid", "k3", "0.2"}, true)
	consumer([]string{"BLMPOP", "0.2", "2", "k2", "k1", "LEFT", "COUNT", "1"}, true)
	for range 2 {
		consumer([]string{"BLMOVE", "k1", "mid", "LEFT", "RIGHT", "0.2"}, false)
		consumer([]string{"BRPOPLPUSH", "k3", "mid", "0.2"}, false)
	}
	for range 2 {
		th := dialRaw(t, srv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pushing.Load() > 0 {
				r, err := th.do("LPOP", "k2")
				if err != nil {
					errs <- err
					return
				}
				if w := replyWords(r); len(w) == 1 {
					note(w[0])
				}
			}
		}()
	}
	var pw sync.WaitGroup
	for p := range pushers {
		c := dialRaw(t, srv)
		pw.Add(1)
		go func() {
			defer pw.Done()
			defer pushing.Add(-1)
			for j := 0; j < perPusher; j++ {
				el := fmt.Sprintf("p%d-%d", p, j)
				key := keys[(p+j)%3]
				var err error
				switch j % 3 {
				case 0:
					_, err = c.do("RPUSH", key, el)
				case 1:
					_, err = c.do("LPUSH", key, el)
				default:
					if _, err = c.do("MULTI"); err == nil {
						c.do("RPUSH", key, el)
						_, err = c.do("EXEC")
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	pw.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ctl := dialRaw(t, srv)
	for _, k := range keys {
		r, err := ctl.do("LRANGE", k, "0", "-1")
		if err != nil {
			t.Fatal(err)
		}
		for _, el := range replyWords(r) {
			note(el)
		}
	}
	for p := range pushers {
		for j := 0; j < perPusher; j++ {
			el := fmt.Sprintf("p%d-%d", p, j)
			if n := seen[el]; n != 1 {
				t.Errorf("%s delivered %d times", el, n)
			}
			delete(seen, el)
		}
	}
	for el, n := range seen {
		t.Errorf("%q delivered %d times, never pushed", el, n)
	}
	if r, _ := ctl.do("INFO", "clients"); !strings.Contains(r, "blocked_clients:0\r\n") {
		t.Errorf("clients still blocked: %q", r)
	}
}
