package cell

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// runningScripts samples the scripts running now: how many, and whether
// one of them holds every shard.
func runningScripts(srv *Server) (n int, all bool) {
	srv.scriptMu.Lock()
	defer srv.scriptMu.Unlock()
	for r := range srv.running {
		n++
		all = all || r.allowAll
	}
	return n, all
}

// TestScriptsOnDifferentShardsOverlap: on default settings two slow
// scripts on declared keys of different shards are seen running at the
// same moment, while a script that needs every shard is never seen
// running beside another.
func TestScriptsOnDifferentShardsOverlap(t *testing.T) {
	srv := startServer(t, nil)
	a, b := keysOnShards(srv)
	slow := "redis.call('incr', KEYS[1]) local x = 0 for i = 1, 300000 do x = x + i end return x"
	whole := "local n = #redis.call('keys', '*') local x = 0 for i = 1, 300000 do x = x + i end return n"
	var overlap, allAlone atomic.Bool
	allAlone.Store(true)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, all := runningScripts(srv)
			if n >= 2 && !all {
				overlap.Store(true)
			}
			if n >= 2 && all {
				allAlone.Store(false)
			}
		}
	}()
	conns := []*testConn{dial(t, srv), dial(t, srv), dial(t, srv)}
	for attempt := 0; attempt < 50 && !overlap.Load(); attempt++ {
		var wg sync.WaitGroup
		for i, k := range []string{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conns[i].do("EVAL", slow, "1", k)
			}()
		}
		wg.Wait()
	}
	if !overlap.Load() {
		t.Error("two scripts on different shards never ran at the same time")
	}
	// The whole-keyspace script (remembered as such after its first run)
	// beside the declared ones.
	for attempt := 0; attempt < 20; attempt++ {
		var wg sync.WaitGroup
		for i, args := range [][]string{{whole, "0"}, {slow, "1", a}, {slow, "1", b}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got := conns[i].do(append([]string{"EVAL"}, args...)...); got[0] != ':' {
					t.Errorf("%q: %q", args[0], got)
				}
			}()
		}
		wg.Wait()
	}
	close(stop)
	<-sampled
	if !allAlone.Load() {
		t.Error("a script holding every shard ran beside another")
	}
}

// TestScriptsSerialInterleaving: scripts that increment a declared counter
// and an undeclared total (before or after writing, so both ways of taking
// more shards run), against readers that check in one atomic step that the
// counters add up to the total. A reader seeing anything else has seen an
// interleaving no serial order of the scripts shows.
func TestScriptsSerialInterleaving(t *testing.T) {
	srv := startServer(t, nil)
	const writers, rounds, counters = 4, 150, 8
	writeFirst := "redis.call('incr', KEYS[1]) return redis.call('incr', 'total')"
	readFirst := "local t = tonumber(redis.call('get', 'total') or '0') redis.call('incr', KEYS[1]) redis.call('set', 'total', t + 1) return t + 1"
	var names []string
	for i := range counters {
		names = append(names, "c"+strconv.Itoa(i))
	}
	check := "local s = 0 for _, k in ipairs(ARGV) do s = s + tonumber(redis.call('get', k) or '0') end " +
		"local t = tonumber(redis.call('get', 'total') or '0') if s ~= t then return redis.error_reply('sum ' .. s .. ' total ' .. t) end return t"
	done := make(chan struct{})
	var wg, readers sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		c := dial(t, srv)
		go func() {
			defer wg.Done()
			for i := range rounds {
				body := writeFirst
				if (i+w)%2 == 1 {
					body = readFirst
				}
				body += " -- " + strconv.Itoa(i%7) // several scripts, some new each time
				if got := c.do("EVAL", body, "1", names[(i*writers+w)%counters]); got[0] != ':' {
					t.Errorf("writer: %q", got)
					return
				}
			}
		}()
	}
	for r := range 2 {
		readers.Add(1)
		c := dial(t, srv)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				var got string
				if r == 0 {
					got = c.do(append([]string{"EVAL", check, "0"}, names...)...)
				} else {
					// MGET locks its shards in order: it must see the
					// same consistent states.
					got = c.do(append([]string{"MGET", "total"}, names...)...)
					got = sumMGET(got)
				}
				if strings.HasPrefix(got, "-") {
					t.Errorf("reader %d: %q", r, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	c := dial(t, srv)
	if got := c.do("GET", "total"); got != "$3\r\n"+strconv.Itoa(writers*rounds)+"\r\n" {
		t.Errorf("total %q, want %d", got, writers*rounds)
	}
	if got := c.do(append([]string{"EVAL", check, "0"}, names...)...); got != ":"+strconv.Itoa(writers*rounds)+"\r\n" {
		t.Errorf("final check %q", got)
	}
}

// sumMGET checks an MGET reply of total then counters: "-..." when the
// counters do not add up to the total.
func sumMGET(reply string) string {
	lines := strings.Split(reply, "\r\n")
	var vals []int
	for i := 1; i < len(lines); i++ {
		switch {
		case lines[i] == "$-1":
			vals = append(vals, 0)
		case strings.HasPrefix(lines[i], "$"):
			v, _ := strconv.Atoi(lines[i+1])
			vals = append(vals, v)
			i++
		}
	}
	s := 0
	for _, v := range vals[1:] {
		s += v
	}
	if s != vals[0] {
		return "-MGET sum " + strconv.Itoa(s) + " total " + strconv.Itoa(vals[0])
	}
	return "+ok"
}
