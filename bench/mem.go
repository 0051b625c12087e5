package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// memRow is one line of the memory table: one data shape on one server.
type memRow struct {
	What     string `json:"what"`
	Server   string `json:"server"`
	Skipped  string `json:"skipped,omitempty"`
	Keys     int    `json:"keys"`
	Elements int    `json:"elements,omitempty"`
	// Deltas over a fresh server's baseline. UsedMemory is INFO memory's
	// used_memory (the allocator's count of live bytes); HasUsedMemory is
	// false when the server has no such field.
	UsedMemory    int64 `json:"used_memory_delta"`
	HasUsedMemory bool  `json:"has_used_memory"`
	RSS           int64 `json:"rss_delta"`
}

// memCase is one shape to load: throttle keys by CL.THROTTLE or by the Lua
// GCRA, or windows of a given size.
type memCase struct {
	what   string
	kind   serverKind
	script string // Lua GCRA: EVALSHA instead of CL.THROTTLE
	window int    // entries per window; 0 for throttle keys
	uuid   bool   // window members are UUIDs (score still the timestamp)
	native bool   // the window is CL.WINDOW's (cellserver only), not a sorted set
	set    int    // members per set (SADD); 0 for the other shapes
	ints   bool   // set members are small integers (Redis's intset)
	bits   int    // bits per bitmap (SETBIT); 0 for the other shapes
}

func (b *bench) memCases() []memCase {
	var cs []memCase
	cs = append(cs, memCase{what: "throttle key (CL.THROTTLE)", kind: kindCell})
	if b.o.module != "" {
		cs = append(cs, memCase{what: "throttle key (CL.THROTTLE)", kind: kindModule})
	}
	cs = append(cs,
		memCase{what: "throttle key (Lua GCRA)", kind: kindRedis, script: gcraScript},
		memCase{what: "throttle key (Lua GCRA)", kind: kindCell, script: gcraScript})
	for _, size := range []int{10, 100, 1000} {
		for _, k := range []serverKind{kindRedis, kindCell} {
			cs = append(cs, memCase{what: fmt.Sprintf("W1 window of %d", size), kind: k, window: size})
		}
		cs = append(cs, memCase{what: fmt.Sprintf("CL.WINDOW of %d", size), kind: kindCell, window: size, native: true})
	}
	for _, k := range []serverKind{kindRedis, kindCell} {
		cs = append(cs, memCase{what: "W1 window of 1000, UUID members", kind: k, window: 1000, uuid: true})
	}
	for _, k := range []serverKind{kindRedis, kindCell} {
		cs = append(cs,
			memCase{what: "set of 10 integers (intset)", kind: k, set: 10, ints: true},
			memCase{what: "set of 1000 members", kind: k, set: 1000})
	}
	for _, k := range []serverKind{kindRedis, kindCell} {
		cs = append(cs, memCase{what: "bitmap of 1024 bits (SETBIT)", kind: k, bits: 1024})
	}
	kinds := b.kinds()
	return slices.DeleteFunc(cs, func(c memCase) bool {
		return !slices.Contains(kinds, c.kind) || !strings.Contains(c.what, b.o.memOnly)
	})
}

// runMem loads each shape into a fresh server and reports the growth per
// key and per element. A fresh server per shape keeps one shape's freed
// memory (which neither allocator gives back at once) out of the next.
func (b *bench) runMem() (report, error) {
	rep := report{Env: b.env, Mode: "memory"}
	for _, mc := range b.memCases() {
		fmt.Fprintf(b.log, "bench: memory: %s on %s\n", mc.what, mc.kind)
		r, err := b.memOne(mc)
		if err != nil {
			return rep, fmt.Errorf("%s on %s: %v", mc.what, mc.kind, err)
		}
		rep.Mem = append(rep.Mem, r)
	}
	rep.Notes = append(rep.Notes,
		"Each shape is loaded into a freshly started server; deltas are over that server's idle baseline, measured "+b.o.memSettle.String()+" after loading.",
		"Keys carry a TTL as in real use (CL.THROTTLE's own, PX in the Lua script, EXPIRE on windows), so Redis's expires dict is counted.",
		"Set rows: SADD in batches of 100 with an EXPIRE; intset members are multiples of 37 below 370, the 1000-member sets' members are \"member:<n>\" (8 to 10 bytes).",
		"Bitmap rows: SETBIT of every 64th bit and the last (a 128-byte string), then EXPIRE; elements are the bytes.",
		"Window members are 13-digit millisecond timestamps, score = member, as W1 writes them; the UUID rows use 36-byte UUID text members with timestamp scores.",
		"Both servers run MEMORY PURGE before each reading: Redis's jemalloc returns dirty pages, cellserver collects garbage and returns free spans, so used_memory is live bytes on both.")
	return rep, nil
}

func (b *bench) memOne(mc memCase) (memRow, error) {
	r := memRow{What: mc.what, Server: string(mc.kind)}
	s, err := b.start(mc.kind)
	if err != nil {
		return r, err
	}
	defer s.Stop()
	c, err := dial(s.addr)
	if err != nil {
		return r, err
	}
	defer c.close()

	var sha string
	if mc.script != "" {
		rep, err := c.do("SCRIPT", "LOAD", mc.script)
		if err != nil {
			return r, err
		}
		if rep.err != "" {
			r.Skipped = skipReason(rep.err, mc.kind)
			return r, nil
		}
		sha = string(rep.bulk)
	}
	time.Sleep(200 * time.Millisecond)
	if err := purge(c); err != nil {
		return r, err
	}
	used0, hasUsed := c.infoField("memory", "used_memory")
	rss0, err := readRSS(s.Pid())
	if err != nil {
		return r, err
	}

	// Commands go out in batches of about 1000 replies.
	var batch []byte
	n := 0
	flush := func() (string, error) {
		if n == 0 {
			return "", nil
		}
		e, err := c.pipeline(batch, n)
		batch, n = batch[:0], 0
		return e, err
	}
	add := func(cmd []byte) (string, error) {
		batch = append(batch, cmd...)
		n++
		if n >= 1000 {
			return flush()
		}
		return "", nil
	}

	base := time.Now().UnixMilli() - 60_000
	if mc.bits > 0 {
		r.Keys = b.o.memKeys
		r.Elements = r.Keys * mc.bits / 8
		for i := range r.Keys {
			key := "bits:" + strconv.Itoa(i)
			for j := 0; j < mc.bits; j += 64 {
				if e, err := add(encodeCommand("SETBIT", key, strconv.Itoa(j), "1")); err != nil || e != "" {
					return memFail(r, mc.kind, e, err)
				}
			}
			for _, cmd := range [][]string{{"SETBIT", key, strconv.Itoa(mc.bits - 1), "1"}, {"EXPIRE", key, "600"}} {
				if e, err := add(encodeCommand(cmd...)); err != nil || e != "" {
					return memFail(r, mc.kind, e, err)
				}
			}
		}
	} else if mc.set > 0 {
		r.Keys = min(b.o.memKeys, max(1, b.o.memMaxElem/mc.set))
		r.Elements = r.Keys * mc.set
		for i := range r.Keys {
			key := "set:" + strconv.Itoa(i)
			for from := 0; from < mc.set; from += 100 {
				args := []string{"SADD", key}
				for j := from; j < min(from+100, mc.set); j++ {
					if mc.ints {
						args = append(args, strconv.Itoa(j*37))
					} else {
						args = append(args, "member:"+strconv.Itoa(j))
					}
				}
				if e, err := add(encodeCommand(args...)); err != nil || e != "" {
					return memFail(r, mc.kind, e, err)
				}
			}
			if e, err := add(encodeCommand("EXPIRE", key, "600")); err != nil || e != "" {
				return memFail(r, mc.kind, e, err)
			}
		}
	} else if mc.window == 0 {
		r.Keys = b.o.memKeys
		for i := range r.Keys {
			cmd := throttleLoadCommand(i, sha, "60")
			if e, err := add(cmd); err != nil || e != "" {
				return memFail(r, mc.kind, e, err)
			}
		}
	} else {
		r.Keys = min(b.o.memKeys, max(1, b.o.memMaxElem/mc.window))
		r.Elements = r.Keys * mc.window
		if mc.native {
			// CL.WINDOW records at the server's clock: one call per key
			// per round, a millisecond or more apart, gives each event a
			// millisecond of its own as the sorted-set rows have.
			for j := 0; j < mc.window; j++ {
				for i := range r.Keys {
					key := "limit:" + strconv.Itoa(i) + ":win"
					if e, err := add(encodeCommand("CL.WINDOW", key, strconv.Itoa(mc.window), "600000", "1")); err != nil || e != "" {
						return memFail(r, mc.kind, e, err)
					}
				}
				if e, err := flush(); err != nil || e != "" {
					return memFail(r, mc.kind, e, err)
				}
				time.Sleep(time.Millisecond)
			}
		}
		for i := range r.Keys {
			if mc.native {
				break
			}
			key := "limit:" + strconv.Itoa(i) + ":w1"
			for from := 0; from < mc.window; from += 100 {
				to := min(from+100, mc.window)
				args := []string{"ZADD", key}
				for j := from; j < to; j++ {
					ts := strconv.FormatInt(base+int64(j), 10)
					m := ts
					if mc.uuid {
						m = fakeUUID(i, j)
					}
					args = append(args, ts, m)
				}
				if e, err := add(encodeCommand(args...)); err != nil || e != "" {
					return memFail(r, mc.kind, e, err)
				}
			}
			if e, err := add(encodeCommand("EXPIRE", key, "600")); err != nil || e != "" {
				return memFail(r, mc.kind, e, err)
			}
		}
	}
	if e, err := flush(); err != nil || e != "" {
		return memFail(r, mc.kind, e, err)
	}
	time.Sleep(b.o.memSettle)
	if err := purge(c); err != nil {
		return r, err
	}
	used1, hasUsed1 := c.infoField("memory", "used_memory")
	rss1, err := readRSS(s.Pid())
	if err != nil {
		return r, err
	}
	r.HasUsedMemory = hasUsed && hasUsed1
	if r.HasUsedMemory {
		r.UsedMemory = used1 - used0
	}
	r.RSS = rss1 - rss0
	return r, nil
}

// purge runs MEMORY PURGE so that the reading that follows counts live
// bytes, not garbage (cellserver) or dirty pages (Redis).
func purge(c *conn) error {
	rep, err := c.do("MEMORY", "PURGE")
	if err != nil {
		return err
	}
	if rep.err != "" {
		return fmt.Errorf("MEMORY PURGE: %s", rep.err)
	}
	return nil
}

// fakeUUID is a UUID-shaped member (36 bytes of hex and dashes), distinct
// for each (key, entry), as a limiter keyed by request id would store.
func fakeUUID(key, entry int) string {
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", key, entry&0xffff, key&0xfff, entry&0xfff, uint64(key)<<20|uint64(entry))
}

func memFail(r memRow, kind serverKind, errReply string, err error) (memRow, error) {
	if err != nil {
		return r, err
	}
	r.Skipped = skipReason(errReply, kind)
	return r, nil
}

func writeMemTable(w io.Writer, rows []memRow) {
	fmt.Fprintln(w, "| what | server | keys | elements | used_memory B/key | RSS B/key | used_memory B/element | RSS B/element |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if r.Skipped != "" {
			fmt.Fprintf(w, "| %s | %s | %s | | | | | |\n", r.What, r.Server, r.Skipped)
			continue
		}
		used, usedEl := "n/a (no INFO used_memory)", ""
		if r.HasUsedMemory {
			used = perUnit(r.UsedMemory, r.Keys)
		}
		elems, rssEl := "", ""
		if r.Elements > 0 {
			elems = strconv.Itoa(r.Elements)
			rssEl = perUnit(r.RSS, r.Elements)
			if r.HasUsedMemory {
				usedEl = perUnit(r.UsedMemory, r.Elements)
			} else {
				usedEl = "n/a"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s |\n",
			r.What, r.Server, r.Keys, elems, used, perUnit(r.RSS, r.Keys), usedEl, rssEl)
	}
	fmt.Fprintln(w)
}

func perUnit(total int64, n int) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatFloat(float64(total)/float64(n), 'f', 1, 64)
}

// throttleLoadCommand is the i-th throttle key's first decision, the
// memory and restart modes' load: CL.THROTTLE (15 burst, 30 per period
// seconds), or the same GCRA as EVALSHA of sha where there is no module.
func throttleLoadCommand(i int, sha, period string) []byte {
	key := "user:" + strconv.Itoa(i) + ":reply"
	if sha != "" {
		return encodeCommand("EVALSHA", sha, "1", key, "15", "30", period, "1")
	}
	return encodeCommand("CL.THROTTLE", key, "15", "30", period, "1")
}
