package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// TestOpenLoopSendsOnSchedule checks the open loop's defining property:
// requests leave on the schedule whether or not earlier ones were answered.
// The fake server holds every reply until it has received all the
// requests the schedule holds; a loop that waited for replies would never
// send them all, and the run would end in the drain deadline's error.
func TestOpenLoopSendsOnSchedule(t *testing.T) {
	const (
		conns = 10
		rate  = 2000 // one request every 500 µs
	)
	dur := 200 * time.Millisecond
	want := int(dur.Seconds() * rate) // no warm-up: every slot is measured

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ping := encodeCommand("PING")
	var mu sync.Mutex
	received := 0
	all := make(chan struct{})
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				var cmu sync.Mutex // owed is shared with the releaser below
				owed := 0
				release := func() {
					select {
					case <-all:
						nc.Write(bytes.Repeat([]byte("+PONG\r\n"), owed))
						owed = 0
					default:
					}
				}
				go func() {
					<-all
					cmu.Lock()
					release()
					cmu.Unlock()
				}()
				var in []byte
				buf := make([]byte, 4096)
				for {
					n, err := nc.Read(buf)
					if err != nil {
						return
					}
					in = append(in, buf[:n]...)
					cmu.Lock()
					for bytes.HasPrefix(in, ping) {
						in = in[len(ping):]
						owed++
						mu.Lock()
						received++
						if received == want {
							close(all)
						}
						mu.Unlock()
					}
					release()
					cmu.Unlock()
				}
			}()
		}
	}()

	w := workloadByName("ping")
	m, err := runOpenLoad(ln.Addr().String(), os.Getpid(), w, w.newGen(nil, ""),
		openConfig{conns: conns, rate: rate, duration: dur})
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("runOpenLoad: %v (received %d of the %d scheduled requests before any reply)", err, received, want)
	}
	if int(m.ops) != want || int(m.hist.n) != want || int(m.lag.n) != want {
		t.Errorf("measured %d operations (%d latencies, %d lags), want the %d scheduled", m.ops, m.hist.n, m.lag.n, want)
	}
	if m.errors != 0 {
		t.Errorf("%d error replies: %s", m.errors, m.firstErr)
	}
}

func TestParsePercents(t *testing.T) {
	got, err := parsePercents("25, 50,75")
	if err != nil || len(got) != 3 || got[0] != 25 || got[2] != 75 {
		t.Errorf("parsePercents(25, 50,75) = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "x", "25,,50", "201"} {
		if _, err := parsePercents(bad); err == nil {
			t.Errorf("parsePercents(%q): no error", bad)
		}
	}
	o, err := parseOptions([]string{"-fixed-load", "50"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.workloads) != 3 || o.workloads[0].name != "throttle" || o.workloads[2].name != "w1" {
		t.Errorf("-fixed-load's default workloads: %v", o.workloads)
	}
	if _, err := parseOptions([]string{"-fixed-load", "50", "-mem"}, io.Discard); err == nil {
		t.Error("-fixed-load with -mem: no error")
	}
}

func TestParsePerfStat(t *testing.T) {
	text := "# started on Fri Nov 27 08:00:00 2026\n\n" +
		"3000,,raw_syscalls:sys_enter,1000,100.00,,\n" +
		"1000,,syscalls:sys_enter_read,1000,100.00,,\n" +
		"<not counted>,,syscalls:sys_enter_epoll_wait,0,100.00,,\n" +
		"150,,context-switches,1000,100.00,,\n"
	got, err := parsePerfStat(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["raw_syscalls:sys_enter"] != 3000 || got["context-switches"] != 150 {
		t.Errorf("parsePerfStat = %v", got)
	}
	// 500 ops/s over 2 s: 1000 operations.
	if p := perOp(got, 500, 2*time.Second); p["raw_syscalls:sys_enter"] != 3 || p["syscalls:sys_enter_read"] != 1 {
		t.Errorf("perOp = %v", p)
	}
	if _, err := parsePerfStat("# nothing\n"); err == nil {
		t.Error("no counts: no error")
	}
}
