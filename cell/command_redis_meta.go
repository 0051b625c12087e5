package cell

import "github.com/cellserver/cellserver/resp"

//go:generate go run ./internal/gencommands -o command_redis.go

// Redis 7.0.15's own table entries for the commands cellserver serves
// (command_redis.go, generated from a running redis-server by
// internal/gencommands): their key specs and tips for COMMAND INFO and
// COMMAND GETKEYSANDFLAGS, and their COMMAND DOCS maps, so that these
// replies are Redis's byte for byte. Commands Redis does not have
// (CL.THROTTLE, CL.PROBE) keep the entries of their registration.

// redisCommand is one command's entry.
type redisCommand struct {
	info  *rvalue // COMMAND INFO's entry but its last element, the subcommands
	tips  []string
	specs []KeySpec
	docs  *rvalue // the COMMAND DOCS map, without "subcommands"
}

// rvalue is a reply as Redis wrote it in RESP3, for writing it again in
// either protocol.
type rvalue struct {
	kind  byte // '$' bulk, '+' status, ':' integer, '%' map, '*' array, '~' set, '_' null
	str   string
	n     int64
	items []*rvalue // a map's alternate keys and values
}

func rb(s string) *rvalue           { return &rvalue{kind: '$', str: s} }
func rs(s string) *rvalue           { return &rvalue{kind: '+', str: s} }
func ri(n int64) *rvalue            { return &rvalue{kind: ':', n: n} }
func rnull() *rvalue                { return &rvalue{kind: '_'} }
func rmap(items ...*rvalue) *rvalue { return &rvalue{kind: '%', items: items} }
func rarr(items ...*rvalue) *rvalue { return &rvalue{kind: '*', items: items} }
func rset(items ...*rvalue) *rvalue { return &rvalue{kind: '~', items: items} }

// write writes v in w's protocol.
func (v *rvalue) write(w *resp.Writer) {
	switch v.kind {
	case '$':
		w.BulkString(v.str)
	case '+':
		w.Status(v.str)
	case ':':
		w.Int(v.n)
	case '%':
		w.Map(len(v.items) / 2)
	case '*':
		w.Array(len(v.items))
	case '~':
		w.Set(len(v.items))
	default:
		w.Null()
	}
	for _, it := range v.items {
		it.write(w)
	}
}

// CommandFullNames lists every command and subcommand served, by full
// name ("config|get"), for internal/gencommands.
func CommandFullNames() []string {
	var out []string
	for _, n := range commandNames() {
		c := commands[n]
		out = append(out, c.Name)
		for _, s := range sortedSubcommands(c) {
			out = append(out, s.Name)
		}
	}
	return out
}

// specKeys appends the argument positions spec finds in args (the command
// name at 0), as Redis's getKeysUsingKeySpecs reads a key spec.
func specKeys(spec *KeySpec, args [][]byte, dst []int) []int {
	argc := len(args)
	var first int
	switch {
	case spec.BeginUnknown:
		return dst
	case spec.Keyword != "":
		start, end, step := spec.StartFrom, argc-1, 1
		if start < 0 {
			start, end, step = argc+start, 0, -1
		}
		first = -1
		for i := start; i != end && i >= 1 && i < argc; i += step {
			if equalFold(args[i], spec.Keyword) {
				first = i + 1
				break
			}
		}
		if first < 0 {
			return dst
		}
	default:
		first = spec.BeginIndex
	}
	if first <= 0 || first >= argc {
		return dst
	}
	var last, step int
	switch {
	case spec.FindUnknown:
		return dst
	case spec.KeyNum:
		n, ok := parseKeyCount(args, first+spec.KeyNumIdx)
		if !ok {
			return dst
		}
		first += spec.FirstKey
		step = max(spec.NumStep, 1)
		last = first + (n-1)*step
	default:
		step = max(spec.KeyStep, 1)
		switch {
		case spec.LastKey >= 0:
			last = first + spec.LastKey
		case spec.Limit == 0:
			last = argc + spec.LastKey
		default:
			last = first + (argc-first)/spec.Limit + spec.LastKey
		}
	}
	for i := first; i <= last && i < argc; i += step {
		dst = append(dst, i)
	}
	return dst
}

func parseKeyCount(args [][]byte, i int) (int, bool) {
	if i >= len(args) {
		return 0, false
	}
	n := 0
	for _, c := range args[i] {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > len(args) {
			return 0, false
		}
	}
	return n, len(args[i]) > 0
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// keyFlagsAt is the flags of the first key spec that finds a key at
// position i of args (COMMAND GETKEYSANDFLAGS); 0 when none does. A spec
// with variable_flags has them decided by the arguments, as Redis's
// getkeys procedure for the command decides them.
// keyFlags is the flags of the key at args[i]: the command's own
// KeyFlags, else its key spec's, else the first spec's for a key only
// the command's parser finds (COMMAND GETKEYSANDFLAGS, ACL checks).
func (c *Command) keyFlags(specs []KeySpec, args [][]byte, i int) KeyFlag {
	if c.KeyFlags != nil {
		return c.KeyFlags(args, i)
	}
	f := keyFlagsAt(specs, args, i)
	if f == 0 && len(specs) > 0 {
		f = specs[0].Flags
	}
	return f
}

func keyFlagsAt(specs []KeySpec, args [][]byte, i int) KeyFlag {
	var buf [8]int
	for s := range specs {
		for _, k := range specKeys(&specs[s], args, buf[:0]) {
			if k != i {
				continue
			}
			if specs[s].Flags&KeyVariableFlags != 0 {
				return variableKeyFlags(args)
			}
			return specs[s].Flags
		}
	}
	return 0
}

// variableKeyFlags is SET's key flags (Redis's setGetKeys): with GET it
// reads the old value (RW access update), without it only overwrites it
// (OW update). SET is the only command served whose spec has
// variable_flags.
func variableKeyFlags(args [][]byte) KeyFlag {
	for _, a := range args[min(3, len(args)):] {
		if equalFold(a, "get") {
			return KeyRW | KeyAccess | KeyUpdate
		}
	}
	return KeyOW | KeyUpdate
}
