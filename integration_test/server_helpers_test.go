package integration_test

import (
	"bytes"
	"slices"
	"strings"
)

// Masks and pair helpers for the server commands (COMMAND, CLIENT, INFO,
// CONFIG).

// maskCommandOrder sorts, in COMMAND INFO entries, the list of
// subcommands: Redis keeps them in a hash table whose order changes from
// run to run. Entries are 10-element arrays; their last element is the
// subcommand list. Everything else is compared as sent.
func maskCommandOrder(v *value) {
	if v.kind != '*' || v.null {
		return
	}
	if isCommandEntry(v) {
		subs := v.elems[9]
		for _, s := range subs.elems {
			maskCommandOrder(s)
		}
		slices.SortStableFunc(subs.elems, func(a, b *value) int {
			return bytes.Compare(a.encode(), b.encode())
		})
		return
	}
	for _, e := range v.elems {
		maskCommandOrder(e)
	}
}

func isCommandEntry(v *value) bool {
	return v.kind == '*' && !v.null && len(v.elems) == 10 &&
		v.elems[0].kind == '$' && v.elems[1].kind == ':' &&
		(v.elems[9].kind == '*' || v.elems[9].kind == '~')
}

// maskDocs keeps, in a COMMAND DOCS reply, only the fields cellserver
// documents (summary, since, group, complexity, subcommands) and sorts the
// subcommands. Arguments, history and doc flags are left out on purpose.
func maskDocs(v *value) {
	sortDocs(v, map[string]bool{"summary": true, "since": true, "group": true, "complexity": true, "subcommands": true})
}

// maskDocsOrder sorts a COMMAND DOCS reply's commands and subcommands by
// name (Redis's order is its hash table's) and keeps every field.
func maskDocsOrder(v *value) { sortDocs(v, nil) }

// sortDocs sorts the name -> docs pairs of a COMMAND DOCS reply at every
// level; with keep, only those fields of each docs map are kept.
func sortDocs(v *value, keep map[string]bool) {
	var walk func(m *value, docMap bool)
	walk = func(m *value, docMap bool) {
		if (m.kind != '*' && m.kind != '%') || m.null || len(m.elems)%2 != 0 {
			return
		}
		var out []*value
		for i := 0; i+1 < len(m.elems); i += 2 {
			k, val := m.elems[i], m.elems[i+1]
			if docMap && keep != nil && !keep[k.text] {
				continue
			}
			if docMap && k.text == "subcommands" {
				walk(val, false)
			} else if !docMap {
				walk(val, true)
			}
			out = append(out, k, val)
		}
		if !docMap { // name -> docs pairs: Redis's order is its hash table's
			type entry struct{ k, v *value }
			var es []entry
			for i := 0; i+1 < len(out); i += 2 {
				es = append(es, entry{out[i], out[i+1]})
			}
			slices.SortStableFunc(es, func(a, b entry) int { return strings.Compare(a.k.text, b.k.text) })
			out = out[:0]
			for _, e := range es {
				out = append(out, e.k, e.v)
			}
		}
		m.elems = out
	}
	walk(v, false)
	*v = *v.sorted()
}

// maskInfoValues hides the value of every INFO field except those named in
// exact, drops the lines of the sections in drop (their fields depend on
// history neither server shares), and sorts the lines of the sections whose
// order Redis does not fix (commandstats, latencystats). The
// section headers, field names and their order are compared.
func maskInfoValues(exact []string, drop ...string) mask {
	return func(v *value) {
		body, ok := textBody(v)
		if !ok {
			return
		}
		var out, section []string
		name := ""
		flush := func() {
			if name == "# Commandstats" || name == "# Latencystats" {
				n := len(section)
				for n > 0 && section[n-1] == "" {
					n--
				}
				slices.Sort(section[:n])
			}
			out = append(out, section...)
			section = nil
		}
		for line := range strings.SplitSeq(body, "\r\n") {
			if strings.HasPrefix(line, "# ") {
				flush()
				name = line
				out = append(out, line)
				continue
			}
			if slices.Contains(drop, strings.TrimPrefix(name, "# ")) && line != "" {
				continue
			}
			k, _, isField := strings.Cut(line, ":")
			if isField && !slices.Contains(exact, k) {
				line = k + ":<value>"
			}
			section = append(section, line)
		}
		flush()
		setTextBody(v, strings.Join(out, "\r\n"))
	}
}

// maskCommandStats hides the timings in cmdstat lines (usec and
// usec_per_call) and sorts the lines; calls, rejected_calls and
// failed_calls are compared.
func maskCommandStats(v *value) {
	body, ok := textBody(v)
	if !ok {
		return
	}
	lines := strings.Split(body, "\r\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "cmdstat_") {
			continue
		}
		name, rest, _ := strings.Cut(l, ":")
		var kept []string
		for kv := range strings.SplitSeq(rest, ",") {
			if !strings.HasPrefix(kv, "usec") {
				kept = append(kept, kv)
			}
		}
		lines[i] = name + ":" + strings.Join(kept, ",")
	}
	if len(lines) > 1 {
		slices.Sort(lines[1:])
	}
	setTextBody(v, strings.Join(lines, "\r\n"))
}

// maskConfigValue hides the value of one parameter in a CONFIG GET reply
// (a flat array in RESP2, a map in RESP3): dir and port differ between the
// two servers.
func maskConfigValue(names ...string) mask {
	return func(v *value) {
		if (v.kind != '*' && v.kind != '%') || v.null {
			return
		}
		for i := 0; i+1 < len(v.elems); i += 2 {
			if slices.Contains(names, v.elems[i].text) && v.elems[i+1].kind == '$' {
				v.elems[i+1].text = "<value>"
			}
		}
		*v = *v.sorted()
	}
}

// DoEach sends a different command to each server (the same request with
// each server's own ids or addresses) and requires identical replies.
func (c *pair) DoEach(redisArgs, cellArgs []string) {
	c.t.Helper()
	c.DoEachMasked(func(*value) {}, redisArgs, cellArgs)
}

// DoEachMasked is DoEach comparing the replies after m.
func (c *pair) DoEachMasked(m mask, redisArgs, cellArgs []string) {
	c.t.Helper()
	redis, cell := c.exchangeEach(redisArgs, cellArgs)
	if bytes.Equal(redis, cell) {
		return
	}
	rv, err1 := parseReply(redis)
	cv, err2 := parseReply(cell)
	if err1 == nil && err2 == nil {
		m(rv)
		m(cv)
		if bytes.Equal(rv.encode(), cv.encode()) {
			return
		}
		redis, cell = rv.encode(), cv.encode()
	}
	c.mismatch(formatCommand(redisArgs)+" / "+formatCommand(cellArgs), redis, cell)
}

func (c *pair) exchangeEach(redisArgs, cellArgs []string) (redis, cell []byte) {
	c.t.Helper()
	var err error
	if redis, err = c.redis.Do(redisArgs...); err != nil {
		c.t.Fatalf("%s: %s: %v", formatCommand(redisArgs), c.srv.redis.name, err)
	}
	if cell, err = c.cell.Do(cellArgs...); err != nil {
		c.t.Fatalf("%s: %s: %v%s", formatCommand(cellArgs), c.srv.cell.name, err, deathNote(c.srv.cell))
	}
	return redis, cell
}

// Send sends args to both servers without reading a reply, for commands
// that answer nothing (CLIENT REPLY OFF / SKIP).
func (c *pair) Send(args ...string) {
	c.t.Helper()
	if err := c.redis.Send(args...); err != nil {
		c.t.Fatal(err)
	}
	if err := c.cell.Send(args...); err != nil {
		c.t.Fatal(err)
	}
}
