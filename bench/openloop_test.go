package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
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

// flatMeasurement is an open-loop run whose every one of ops requests
// took us µs: each of its percentiles is us.
func flatMeasurement(us float64, ops int) openMeasurement {
	var m openMeasurement
	m.ops = uint64(ops)
	for range ops {
		m.hist.record(uint64(us * 1e3))
		m.lag.record(1000)
	}
	return m
}

// TestFixedRounds: each row runs the given rounds, the rows alternating
// in order, and reports the median of its rounds with each round's
// percentiles; a row skipped before runs none, one that fails stops.
func TestFixedRounds(t *testing.T) {
	// Latency of row i in each round, µs.
	lat := [][]float64{{300, 100, 200, 250}, {50, 70, 60, 90}, {1, 1, 1, 1}}
	for _, tc := range []struct {
		name     string
		rounds   int
		failAt   [2]int // row, round (from 0) whose run fails; {-1} none
		calls    string // the runs in order, "row/round"
		p99      []float64
		runs     [][]float64 // each row's per-round p99s
		skipped1 string
	}{
		{"three rounds", 3, [2]int{-1, -1}, "0/0 1/0 1/1 0/1 0/2 1/2",
			[]float64{200, 60, 0}, [][]float64{{300, 100, 200}, {50, 70, 60}, nil}, ""},
		{"even rounds: the middle two's mean", 4, [2]int{-1, -1}, "0/0 1/0 1/1 0/1 0/2 1/2 1/3 0/3",
			[]float64{225, 65, 0}, [][]float64{{300, 100, 200, 250}, {50, 70, 60, 90}, nil}, ""},
		{"one round", 1, [2]int{-1, -1}, "0/0 1/0",
			[]float64{300, 50, 0}, [][]float64{{300}, {50}, nil}, ""},
		{"a failed round ends the row", 3, [2]int{1, 1}, "0/0 1/0 1/1 0/1 0/2",
			[]float64{200, 0, 0}, [][]float64{{300, 100, 200}, nil, nil}, "failed in round 2: refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := []fixedRow{{Server: "redis"}, {Server: "cellserver"}, {Server: "cellserver-off", Skipped: "not started"}}
			var calls []string
			fixedRounds(rows, tc.rounds, func(i, round int) (openMeasurement, error) {
				calls = append(calls, fmt.Sprintf("%d/%d", i, round))
				if tc.failAt == [2]int{i, round} {
					return openMeasurement{}, errors.New("refused")
				}
				return flatMeasurement(lat[i][round], 100), nil
			})
			if got := strings.Join(calls, " "); got != tc.calls {
				t.Errorf("runs %q, want %q", got, tc.calls)
			}
			for i, r := range rows {
				if r.P99us != tc.p99[i] || r.P50us != tc.p99[i] || r.P999us != tc.p99[i] {
					t.Errorf("row %d: p50 %v p99 %v p99.9 %v, want %v", i, r.P50us, r.P99us, r.P999us, tc.p99[i])
				}
				if !slices.Equal(r.RoundP99us, tc.runs[i]) || !slices.Equal(r.RoundP50us, tc.runs[i]) {
					t.Errorf("row %d: rounds' p99 %v p50 %v, want %v", i, r.RoundP99us, r.RoundP50us, tc.runs[i])
				}
				if want := uint64(100 * len(tc.runs[i])); r.Skipped == "" && (r.Ops != want || r.Rounds != len(tc.runs[i])) {
					t.Errorf("row %d: %d ops in %d rounds, want %d in %d", i, r.Ops, r.Rounds, want, len(tc.runs[i]))
				}
			}
			if rows[1].Skipped != tc.skipped1 || rows[2].Skipped != "not started" {
				t.Errorf("skipped: %q, %q", rows[1].Skipped, rows[2].Skipped)
			}
		})
	}
}

// TestFixedTableRanges: the table gives each percentile's median and its
// range over the rounds, and the median alone for a single round.
func TestFixedTableRanges(t *testing.T) {
	rows := []fixedRow{{Workload: "set", Server: "redis", LoadPct: 50, Rate: 1000}, {Workload: "set", Server: "cellserver", LoadPct: 50, Rate: 1000}}
	fixedRounds(rows, 3, func(i, round int) (openMeasurement, error) {
		return flatMeasurement([]float64{300, 100, 200}[round]+float64(i), 10), nil
	})
	one := []fixedRow{{Workload: "w1", Server: "redis", LoadPct: 25, Rate: 500}}
	fixedRounds(one, 1, func(int, int) (openMeasurement, error) { return flatMeasurement(42, 10), nil })
	var b strings.Builder
	writeFixedTable(&b, append(rows, one...))
	out := b.String()
	for _, want := range []string{"| set | 50% of 0 | 1,000 | redis | 3 | 200 (100-300) | 200 (100-300) | 200 (100-300) |",
		"| set | 50% of 0 | 1,000 | cellserver | 3 | 201 (101-301) |", "| w1 | 25% of 0 | 500 | redis | 1 | 42.0 | 42.0 | 42.0 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
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
