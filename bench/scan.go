package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Scan mode (-scan): what iterating a big keyspace costs, and what it does
// to the other clients meanwhile.
//
// Each server is loaded with -scan-keys string keys, then, in turn:
//   - a full SCAN with COUNT -scan-count, cursor 0 to cursor 0, one call at
//     a time: its time, its calls and the distinct keys it returned;
//   - the first 1,000 calls of a SCAN with COUNT 10: keys per call;
//   - KEYS *: its time and the keys it returned.
//
// During the full SCAN and KEYS, -scan-getters other connections send GET
// of random loaded keys one at a time; the latency of those GETs, while the
// iteration runs, is what a server doing a SCAN or KEYS costs everyone else.
// A server that answers one command at a time (Redis) shows the length of
// its longest call there; one that locks part of its keyspace per call
// shows the length of its longest hold of that part.

// scanRow is one line of the scan table.
type scanRow struct {
	Server     string  `json:"server"`
	Op         string  `json:"op"`
	Keys       int     `json:"keys_loaded"`
	Secs       float64 `json:"seconds"`
	Calls      int     `json:"calls"`
	Returned   int     `json:"keys_returned"`
	Distinct   int     `json:"distinct_keys"`
	PerCall    float64 `json:"keys_per_call"`
	GetOps     uint64  `json:"get_ops"`
	GetP50us   float64 `json:"get_p50_us"`
	GetP99us   float64 `json:"get_p99_us"`
	GetMaxus   float64 `json:"get_max_us"`
	RoundIndex int     `json:"round"`
}

func (b *bench) runScan() (report, error) {
	rep := report{Env: b.env, Mode: "scan"}
	for round := range b.o.rounds {
		for _, kind := range b.kinds() {
			if kind == kindCellOff || kind == kindModule {
				continue
			}
			rows, err := b.scanServer(kind)
			if err != nil {
				return rep, fmt.Errorf("%s: %v", kind, err)
			}
			for i := range rows {
				rows[i].RoundIndex = round + 1
			}
			rep.Scan = append(rep.Scan, rows...)
		}
	}
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Keys: key:0 .. key:%d, value \"v\", loaded with pipelined SET. GET latency: %d connections, one GET of a random loaded key at a time each, recorded only while the SCAN or KEYS runs.", b.o.scanKeys-1, b.o.scanGetters),
		"SCAN COUNT 10 row: the first 1,000 calls of a scan only (calls, keys returned, keys per call); its time is theirs.")
	return rep, nil
}

// scanServer starts a fresh server of kind, loads it and measures it.
func (b *bench) scanServer(kind serverKind) ([]scanRow, error) {
	s, err := b.start(kind)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	c, err := dial(s.addr)
	if err != nil {
		return nil, err
	}
	defer c.close()
	fmt.Fprintf(b.log, "bench: %s: loading %d keys\n", kind, b.o.scanKeys)
	if err := loadScanKeys(c, b.o.scanKeys); err != nil {
		return nil, err
	}
	var rows []scanRow
	count := strconv.Itoa(b.o.scanCount)
	r, err := b.withGetters(s.addr, func() (scanRow, error) { return fullScan(c, count, 0) })
	if err != nil {
		return nil, err
	}
	r.Op = "SCAN COUNT " + count
	rows = append(rows, r)
	r, err = fullScan(c, "10", 1000)
	if err != nil {
		return nil, err
	}
	r.Op = "SCAN COUNT 10 (1,000 calls)"
	rows = append(rows, r)
	r, err = b.withGetters(s.addr, func() (scanRow, error) { return keysAll(c) })
	if err != nil {
		return nil, err
	}
	r.Op = "KEYS *"
	rows = append(rows, r)
	for i := range rows {
		rows[i].Server, rows[i].Keys = string(kind), b.o.scanKeys
	}
	return rows, nil
}

// loadScanKeys sets key:0 .. key:n-1 in pipelines of 1,000 SETs.
func loadScanKeys(c *conn, n int) error {
	var batch []byte
	for i := 0; i < n; {
		batch = batch[:0]
		m := 0
		for ; m < 1000 && i < n; m, i = m+1, i+1 {
			batch = appendArrayHeader(batch, 3)
			batch = appendBulkString(batch, "SET")
			batch = appendBulkString(batch, "key:"+strconv.Itoa(i))
			batch = appendBulkString(batch, "v")
		}
		e, err := c.pipeline(batch, m)
		if err == nil && e != "" {
			err = errors.New(e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fullScan runs SCAN with count from cursor 0 until it returns 0, or for
// maxCalls calls when that is positive.
func fullScan(c *conn, count string, maxCalls int) (scanRow, error) {
	var r scanRow
	seen := map[string]struct{}{}
	cursor := "0"
	start := time.Now()
	for {
		rep, err := c.do("SCAN", cursor, "COUNT", count)
		if err != nil {
			return r, err
		}
		if rep.err != "" || rep.kind != '*' || len(rep.elems) != 2 {
			return r, fmt.Errorf("SCAN: unexpected reply %q", rep.err)
		}
		r.Calls++
		cursor = string(rep.elems[0].bulk)
		for _, k := range rep.elems[1].elems {
			seen[string(k.bulk)] = struct{}{}
			r.Returned++
		}
		if cursor == "0" || maxCalls > 0 && r.Calls >= maxCalls {
			break
		}
	}
	r.Secs = time.Since(start).Seconds()
	r.Distinct = len(seen)
	r.PerCall = float64(r.Returned) / float64(r.Calls)
	return r, nil
}

// keysAll runs KEYS * once.
func keysAll(c *conn) (scanRow, error) {
	start := time.Now()
	rep, err := c.do("KEYS", "*")
	if err != nil {
		return scanRow{}, err
	}
	if rep.err != "" || rep.kind != '*' {
		return scanRow{}, fmt.Errorf("KEYS: unexpected reply %q", rep.err)
	}
	r := scanRow{Secs: time.Since(start).Seconds(), Calls: 1, Returned: len(rep.elems)}
	seen := map[string]struct{}{}
	for _, k := range rep.elems {
		seen[string(k.bulk)] = struct{}{}
	}
	r.Distinct, r.PerCall = len(seen), float64(r.Returned)
	return r, nil
}

// withGetters runs op while -scan-getters connections GET random keys, and
// adds the latency of the GETs sent while op ran to its row.
func (b *bench) withGetters(addr string, op func() (scanRow, error)) (scanRow, error) {
	var on, stop atomic.Bool
	hists := make([]histogram, b.o.scanGetters)
	errs := make([]error, b.o.scanGetters)
	var ready, wg sync.WaitGroup
	for i := range hists {
		c, err := dial(addr)
		if err != nil {
			return scanRow{}, err
		}
		defer c.close()
		c.rr.keepValues = false
		c.nc.SetDeadline(time.Now().Add(10 * time.Minute))
		ready.Add(1)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			cmds := make([][]byte, 1024)
			for j := range cmds {
				cmds[j] = encodeCommand("GET", "key:"+strconv.Itoa(rng.IntN(b.o.scanKeys)))
			}
			for j := 0; !stop.Load(); j++ {
				if j == 100 {
					ready.Done() // connected and warm
				}
				t := time.Now()
				_, err := c.nc.Write(cmds[j%len(cmds)])
				if err == nil {
					_, err = c.rr.next()
				}
				if err != nil {
					errs[i] = err
					if j < 100 {
						ready.Done()
					}
					return
				}
				if on.Load() {
					hists[i].record(uint64(time.Since(t)))
				}
			}
		})
	}
	ready.Wait()
	on.Store(true)
	r, err := op()
	on.Store(false)
	stop.Store(true)
	wg.Wait()
	if err == nil {
		err = errors.Join(errs...)
	}
	var h histogram
	for i := range hists {
		h.merge(&hists[i])
	}
	r.GetOps = h.n
	r.GetP50us = float64(h.percentile(0.5)) / 1e3
	r.GetP99us = float64(h.percentile(0.99)) / 1e3
	r.GetMaxus = float64(h.max) / 1e3
	return r, err
}

func writeScanTable(w io.Writer, rows []scanRow) {
	fmt.Fprintln(w, "| round | server | op | keys | time s | calls | keys returned | distinct | keys/call | GETs meanwhile | GET p50 µs | GET p99 µs | GET max µs |")
	fmt.Fprintln(w, "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		get := " | | | |"
		if r.GetOps > 0 {
			get = fmt.Sprintf("%d | %s | %s | %s |", r.GetOps, num(r.GetP50us), num(r.GetP99us), num(r.GetMaxus))
		}
		fmt.Fprintf(w, "| %d | %s | %s | %d | %.2f | %d | %d | %d | %.0f | %s\n",
			r.RoundIndex, r.Server, r.Op, r.Keys, r.Secs, r.Calls, r.Returned, r.Distinct, r.PerCall, get)
	}
	fmt.Fprintln(w)
}
