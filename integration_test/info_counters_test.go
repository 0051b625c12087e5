package integration_test

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// infoFields reads "name:value" lines of an INFO reply.
func infoFields(reply string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(reply, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

func infoNum(t *testing.T, p *process, section, name string) float64 {
	t.Helper()
	c, err := dialRESP(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Do("INFO", section)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := infoFields(string(r))[name]
	if !ok {
		t.Fatalf("%s: INFO %s has no %s", p.name, section, name)
	}
	if section == "keyspace" { // db0:keys=..,expires=..,avg_ttl=N
		_, v, _ = strings.Cut(v, "avg_ttl=")
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s: %s=%q", p.name, name, v)
	}
	return n
}

// TestInfoCountersLikeRedis: the same commands sent to both servers move
// INFO's counters the same way: keyspace_hits and keyspace_misses by the
// same amounts, total_net_input_bytes by the bytes sent and
// total_net_output_bytes by about the bytes received, the instantaneous_*
// rates above zero under load and back to zero after, and avg_ttl to an
// estimate of the keys' remaining TTL. Exact values differ (timing, INFO's
// own reply); what each server does with them is compared.
func TestInfoCountersLikeRedis(t *testing.T) {
	s := startServers(t, serverOptions{})
	servers := []*process{s.redis, s.cell}
	type before struct{ hits, misses, in, out float64 }
	var b [2]before
	for i, p := range servers {
		b[i] = before{infoNum(t, p, "stats", "keyspace_hits"), infoNum(t, p, "stats", "keyspace_misses"),
			infoNum(t, p, "stats", "total_net_input_bytes"), infoNum(t, p, "stats", "total_net_output_bytes")}
	}
	// A fixed workload: 100 keys with a TTL of 1000 s, reads that hit and
	// miss, writes that count neither.
	var script [][]string
	for i := range 100 {
		script = append(script, []string{"SET", "k" + strconv.Itoa(i), "v", "EX", "1000"})
	}
	for i := range 150 {
		script = append(script, []string{"GET", "k" + strconv.Itoa(i)})
	}
	script = append(script, []string{"MGET", "k1", "nosuch", "k2"}, []string{"EXISTS", "k1", "nosuch"},
		[]string{"HGET", "nosuch", "f"}, []string{"TTL", "k3"}, []string{"INCR", "counter"}, []string{"DEL", "counter"})
	var sent, received [2]int
	for i, p := range servers {
		c := mustDial(t, p)
		for _, cmd := range script {
			sent[i] += len(encodeCommand(cmd...))
			r := mustDo(t, c, cmd...)
			received[i] += len(r)
		}
	}
	for i, p := range servers {
		hits := infoNum(t, p, "stats", "keyspace_hits") - b[i].hits
		misses := infoNum(t, p, "stats", "keyspace_misses") - b[i].misses
		in := infoNum(t, p, "stats", "total_net_input_bytes") - b[i].in
		out := infoNum(t, p, "stats", "total_net_output_bytes") - b[i].out
		// 100 GETs, 2 of MGET, 1 of EXISTS, TTL; 50 GETs, 1 MGET, 1 EXISTS, HGET.
		if hits != 104 || misses != 53 {
			t.Errorf("%s: keyspace_hits +%v, keyspace_misses +%v; want +104, +53", p.name, hits, misses)
		}
		// The INFO commands that read the figures come on top.
		if in < float64(sent[i]) || in > float64(sent[i])+200 {
			t.Errorf("%s: total_net_input_bytes +%v for %d bytes sent", p.name, in, sent[i])
		}
		if out < float64(received[i]) || out > float64(received[i])+20000 {
			t.Errorf("%s: total_net_output_bytes +%v for %d bytes received", p.name, out, received[i])
		}
	}

	// Sustained load: the rates rise above zero on both, then fall back.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range servers {
		wg.Add(1)
		go func(p *process) {
			defer wg.Done()
			c, err := dialRESP(p.addr)
			if err != nil {
				return
			}
			defer c.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for range 50 {
					c.Send("GET", "k1")
				}
				for range 50 {
					if _, err := c.ReadReply(); err != nil {
						return
					}
				}
			}
		}(p)
	}
	// Under load the rates settle well above what the polling INFOs
	// alone cause (10 a second); after it they fall to that.
	rates := []struct {
		name       string
		load, idle float64
	}{{"instantaneous_ops_per_sec", 1000, 20}, {"instantaneous_input_kbps", 10, 1}, {"instantaneous_output_kbps", 10, 30}}
	for _, p := range servers {
		for _, r := range rates {
			waitInfo(t, p, r.name, func(v float64) bool { return v > r.load }, "above "+fmt.Sprint(r.load)+" under load")
		}
	}
	close(stop)
	wg.Wait()
	for _, p := range servers {
		for _, r := range rates {
			waitInfo(t, p, r.name, func(v float64) bool { return v < r.idle }, "below "+fmt.Sprint(r.idle)+" after the load")
		}
	}
	for _, p := range servers {
		waitInfo(t, p, "db0", func(v float64) bool { return v > 900_000 && v <= 1_000_000 },
			"avg_ttl: the keys' remaining TTL, about 1000 s")
	}
}

// waitInfo polls INFO until name's value satisfies ok (a field of db0
// means its avg_ttl), for up to 10 s: the rates are averages over 1.6 s
// and avg_ttl is estimated by the expiry cycle.
func waitInfo(t *testing.T, p *process, name string, ok func(float64) bool, want string) {
	t.Helper()
	section := "stats"
	if strings.HasPrefix(name, "db") {
		section = "keyspace"
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := infoNum(t, p, section, name)
		if testing.Verbose() {
			t.Logf("%s: %s=%v", p.name, name, v)
		}
		if ok(v) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %s=%v, want %s", p.name, name, v, want)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestInfoCommandstatsInScripts: the commands a script or a function runs
// count in INFO commandstats as Redis counts them (calls, rejected_calls
// for a write refused in a read-only script or a command no script may
// run, failed_calls for an error reply), beside the EVAL or FCALL that ran
// them, and their errors in INFO errorstats; inside MULTI too.
func TestInfoCommandstatsInScripts(t *testing.T) {
	s := startServers(t, serverOptions{})
	lib := "#!lua name=statlib\n" +
		"redis.register_function('f', function() redis.call('set', 'b', 2) return redis.call('get', 'b') end)\n" +
		"redis.register_function{function_name='g', callback=function() return redis.pcall('set', 'b', 3) end, flags={'no-writes'}}"
	cmds := [][]string{
		{"FUNCTION", "LOAD", "REPLACE", lib},
		{"CONFIG", "RESETSTAT"},
		{"SET", "s", "foo"},
		{"EVAL", "redis.call('set', 'a', 1) redis.call('get', 'a') redis.pcall('incr', 'x', 'y') return redis.call('incr', 'n')", "0"},
		{"EVAL", "return redis.pcall('incr', 's')", "0"},
		{"EVAL", "return redis.call('incr', 's')", "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.pcall('set', 'q', 1)", "0"},
		{"EVAL_RO", "return redis.pcall('set', 'q', 1)", "0"},
		{"EVAL", "return redis.pcall('multi')", "0"},
		{"EVAL", "return redis.pcall('lpush', 's', 1)", "0"},
		{"EVAL", "return redis.pcall('nosuch')", "0"},
		{"EVAL", "return redis.pcall('set', 'a')", "0"},
		{"FCALL", "f", "0"},
		{"FCALL_RO", "f", "0"},
		{"FCALL_RO", "g", "0"},
		{"FCALL", "nosuch", "0"},
		{"MULTI"},
		{"EVAL", "redis.call('select', 1) redis.call('ping') return redis.call('set', 'm', 1)", "0"},
		{"FCALL", "f", "0"},
		{"EXEC"},
	}
	// stats keeps calls, rejected_calls and failed_calls of each command,
	// not the times.
	usec := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)
	stats := func(p *process) string {
		c := mustDial(t, p)
		for _, cmd := range cmds {
			mustDo(t, c, cmd...)
		}
		var lines []string
		for _, section := range []string{"commandstats", "errorstats"} {
			for k, v := range infoFields(mustDo(t, c, "INFO", section)) {
				lines = append(lines, k+":"+usec.ReplaceAllString(v, ""))
			}
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	want, got := stats(s.redis), stats(s.cell)
	if got != want {
		t.Fatalf("INFO commandstats and errorstats after scripts:\ncellserver\n%s\nredis\n%s", got, want)
	}
	if !strings.Contains(got, "cmdstat_set:calls=") {
		t.Fatalf("no SET counted:\n%s", got)
	}
}
