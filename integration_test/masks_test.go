package integration_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A mask rewrites, in place, the parts of a reply that legitimately differ
// between two servers. A mask replaces a field only when it has the right
// type and a plausible value; anything unexpected is left alone, so it shows
// up in the comparison.
type mask func(v *value)

// maskTime hides the clock in a TIME reply: *2 of two bulk strings, unix
// seconds within a minute of ours and microseconds (0..999999, not
// zero-padded).
func maskTime(v *value) {
	if v.kind != '*' || v.null || len(v.elems) != 2 {
		return
	}
	secs, micros := v.elems[0], v.elems[1]
	if secs.kind != '$' || secs.null || micros.kind != '$' || micros.null {
		return
	}
	s, err := strconv.ParseInt(secs.text, 10, 64)
	if err != nil || !isCanonicalInt(secs.text) || abs(s-time.Now().Unix()) > 60 {
		return
	}
	us, err := strconv.ParseInt(micros.text, 10, 64)
	if err != nil || !isCanonicalInt(micros.text) || us < 0 || us > 999999 {
		return
	}
	secs.text = "<unix-seconds>"
	micros.text = "<microseconds>"
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

var versionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// maskHello hides the connection id and the server version in a HELLO reply
// (a flat array in RESP2, a map in RESP3). Every other field is compared.
func maskHello(v *value) {
	if (v.kind != '*' && v.kind != '%') || v.null {
		return
	}
	for i := 0; i+1 < len(v.elems); i += 2 {
		k, val := v.elems[i], v.elems[i+1]
		if k.kind != '$' || k.null {
			continue
		}
		switch k.text {
		case "id":
			maskInt(val)
		case "version":
			if val.kind == '$' && !val.null && versionPattern.MatchString(val.text) {
				val.text = "<version>"
			}
		}
	}
}

// maskInt hides the value of a non-negative integer reply, such as CLIENT ID.
func maskInt(v *value) {
	if v.kind == ':' && !strings.HasPrefix(v.text, "-") {
		v.text = "<integer>"
	}
}

// clientVolatileFields are the CLIENT LIST / CLIENT INFO fields that depend on
// the connection (ids, addresses, fds), on time, or on buffer sizes and memory
// accounting, which no other server reproduces.
var clientVolatileFields = map[string]bool{
	"id": true, "addr": true, "laddr": true, "fd": true, "age": true, "idle": true,
	"qbuf": true, "qbuf-free": true, "argv-mem": true, "multi-mem": true,
	"rbs": true, "rbp": true, "obl": true, "oll": true, "omem": true, "tot-mem": true,
}

// maskClientList hides the volatile fields of each line of a CLIENT LIST or
// CLIENT INFO reply (a bulk string in RESP2, a verbatim string in RESP3).
// Field names, their order and every other value are compared.
func maskClientList(v *value) {
	body, ok := textBody(v)
	if !ok {
		return
	}
	lines := strings.SplitAfter(body, "\n")
	for i, line := range lines {
		content := strings.TrimSuffix(line, "\n")
		fields := strings.Split(content, " ")
		for j, f := range fields {
			name, _, found := strings.Cut(f, "=")
			if found && clientVolatileFields[name] {
				fields[j] = name + "=<masked>"
			}
		}
		lines[i] = strings.Join(fields, " ") + line[len(content):]
	}
	setTextBody(v, strings.Join(lines, ""))
}

// maskInfo reduces an INFO reply to its section headers, the blank lines
// between sections, and the fields named in keep (with their values). With
// no names only the section structure is compared.
func maskInfo(keep ...string) mask {
	return func(v *value) {
		body, ok := textBody(v)
		if !ok {
			return
		}
		var out []string
		for line := range strings.SplitSeq(body, "\r\n") {
			name, _, isField := strings.Cut(line, ":")
			if !isField || strings.HasPrefix(line, "#") || slices.Contains(keep, name) {
				out = append(out, line)
			}
		}
		setTextBody(v, strings.Join(out, "\r\n"))
	}
}

// textBody returns the text of a bulk or verbatim string, without the
// verbatim format prefix.
func textBody(v *value) (string, bool) {
	switch {
	case v.null:
		return "", false
	case v.kind == '$':
		return v.text, true
	case v.kind == '=':
		return v.text[4:], true
	}
	return "", false
}

func setTextBody(v *value, body string) {
	if v.kind == '=' {
		v.text = v.text[:4] + body
	} else {
		v.text = body
	}
}
