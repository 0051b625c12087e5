package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

// Big-argument mode (-bigarg): the memory a server needs for one huge
// argument, and what it keeps after connections that sent part of one
// end.
//
// Each server starts fresh and is measured in two phases:
//   - SET of one -bigarg-mb MB value, written in 1 MB pieces: the peak
//     resident memory while it is read and stored (VmHWM, which a fresh
//     process has only reached here), the RSS once it is stored, and the
//     RSS after DEL;
//   - three connections that each send the header and all but the last
//     MB of such a SET and stop: the RSS while they wait, and 2 s after
//     they close.
//
// RSS and VmHWM come from /proc/PID/status, relative to the RSS of the
// idle server before the phase.

// bigArgRow is one line of the big-argument table.
type bigArgRow struct {
	Server   string  `json:"server"`
	Phase    string  `json:"phase"`
	SizeMB   int     `json:"size_mb"`
	BaseMB   float64 `json:"base_rss_mb"`
	PeakMB   float64 `json:"peak_rss_mb_above_base"`
	DuringMB float64 `json:"rss_mb_above_base_during"`
	AfterMB  float64 `json:"rss_mb_above_base_after"`
	Secs     float64 `json:"seconds"`
}

func (b *bench) runBigArg() (report, error) {
	rep := report{Env: b.env, Mode: "bigarg"}
	for _, kind := range b.kinds() {
		if kind == kindCellOff || kind == kindModule {
			continue
		}
		rows, err := b.bigArgServer(kind)
		if err != nil {
			return rep, fmt.Errorf("%s: %v", kind, err)
		}
		rep.BigArg = append(rep.BigArg, rows...)
	}
	rep.Notes = append(rep.Notes,
		"MB are MiB above the idle server's RSS before the phase. SET: peak is VmHWM (the process's peak RSS so far; the phase runs first on a fresh process), during is the RSS with the value stored, after is the RSS 2 s after DEL.",
		"Unfinished uploads: three connections each send *3 SET key $<size> and all but the last MiB of the value, then wait; during is the RSS 2 s after they sent it, after is the RSS 2 s after they close (no peak: VmHWM holds the SET phase's).")
	return rep, nil
}

// bigArgServer starts a fresh server of kind and measures both phases.
func (b *bench) bigArgServer(kind serverKind) ([]bigArgRow, error) {
	s, err := b.start(kind)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	pid := s.Pid()
	size := b.o.bigArgMB << 20
	val := bytes.Repeat([]byte("v"), size)
	header := []byte("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$" + strconv.Itoa(size) + "\r\n")
	mb := func(v int64) float64 { return float64(v) / (1 << 20) }
	status := func(field string) int64 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return 0
		}
		v, _ := parseStatusKB(data, field)
		return v
	}
	settle := func() { time.Sleep(2 * time.Second) }

	c, err := dial(s.addr)
	if err != nil {
		return nil, err
	}
	defer c.close()
	settle()
	base := status("VmRSS")
	start := time.Now()
	c.nc.SetDeadline(time.Now().Add(10 * time.Minute))
	if err := writePieces(c.nc, header, val, []byte("\r\n")); err != nil {
		return nil, err
	}
	r, err := c.rr.next()
	if err != nil || r.err != "" {
		return nil, fmt.Errorf("SET: %v %s", err, r.err)
	}
	set := bigArgRow{Server: string(kind), Phase: "SET of one value", SizeMB: b.o.bigArgMB, BaseMB: mb(base),
		Secs: time.Since(start).Seconds(), PeakMB: mb(status("VmHWM") - base), DuringMB: mb(status("VmRSS") - base)}
	if _, err := c.do("DEL", "big"); err != nil {
		return nil, err
	}
	settle()
	set.AfterMB = mb(status("VmRSS") - base)

	base = status("VmRSS")
	up := bigArgRow{Server: string(kind), Phase: "3 unfinished uploads, then closed", SizeMB: b.o.bigArgMB, BaseMB: mb(base)}
	start = time.Now()
	sent := size - 1<<20
	var conns []net.Conn
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for range 3 {
		nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			return nil, err
		}
		conns = append(conns, nc)
		nc.SetDeadline(time.Now().Add(10 * time.Minute))
		if err := writePieces(nc, header, val[:sent]); err != nil {
			return nil, err
		}
	}
	settle() // the server reads what the socket buffers still hold
	up.DuringMB = mb(status("VmRSS") - base)
	up.Secs = time.Since(start).Seconds()
	for _, nc := range conns {
		nc.Close()
	}
	conns = nil
	settle()
	up.AfterMB = mb(status("VmRSS") - base)
	up.PeakMB = -1 // VmHWM includes the SET phase's peak
	if _, err := c.do("PING"); err != nil {
		return nil, errors.New("the server stopped answering after the uploads")
	}
	return []bigArgRow{set, up}, nil
}

// writePieces writes parts to w in pieces of at most 1 MiB.
func writePieces(w io.Writer, parts ...[]byte) error {
	for _, p := range parts {
		for len(p) > 0 {
			n := min(len(p), 1<<20)
			if _, err := w.Write(p[:n]); err != nil {
				return err
			}
			p = p[n:]
		}
	}
	return nil
}

func writeBigArgTable(w io.Writer, rows []bigArgRow) {
	fmt.Fprintln(w, "| server | phase | size MiB | idle RSS MiB | peak MiB | during MiB | after MiB | time s |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		peak := "-"
		if r.PeakMB >= 0 {
			peak = fmt.Sprintf("%.0f", r.PeakMB)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %s | %.0f | %.0f | %.2f |\n",
			r.Server, r.Phase, r.SizeMB, r.BaseMB, peak, r.DuringMB, r.AfterMB, r.Secs)
	}
	fmt.Fprintln(w)
}
