package cell

import "github.com/cellserver/cellserver/cell/script"

// ulule/limiter v3's Redis store: a fixed window counter. Increment adds
// ARGV[1] to KEYS[1] and, on the window's first hit, sets its TTL to
// ARGV[2] ms; Peek reads the count and TTL. Both reply {count, ttl}.

func init() {
	registerNative("f74233f556d3f99c50b61169cf8aa8d5deb63fb2", "ulule limiter increment", nativeUluleIncr, 5, 8, 12)
	registerNative("566f5c6a17e5fddb9a10bf389f754edd0d899c61", "ulule limiter peek", nativeUlulePeek, 3, 7)
}

var (
	cmdLowerIncrby  = nativeCommand("incrby")
	cmdLowerPexpire = nativeCommand("pexpire")
	cmdLowerPttl    = nativeCommand("pttl")
)

// nativeUluleIncr's calls: 0 incrby, 1 pexpire, 2 pttl.
func nativeUluleIncr(n *nativeRun) bool {
	if len(n.keys) < 1 || len(n.argv) < 2 {
		return false
	}
	count, ok1 := plainNumber(n.argv[0])
	ttl, ok2 := plainNumber(n.argv[1])
	if !ok1 || !ok2 {
		return false // tonumber's nil and what Lua does with it
	}
	key := n.keys[0]
	n.cmd(cmdLowerIncrby, key, n.argv[0])
	b := n.call(0)
	if b == nil {
		return true
	}
	r, ok := n.intReply(b)
	if !ok {
		return n.internal()
	}
	ret := float64(r) // a Lua number
	if ret == count {
		if ttl > 0 {
			n.cmd(cmdLowerPexpire, key, n.argv[1])
			if n.call(1) == nil {
				return true
			}
		}
		n.w.Array(2)
		n.w.Int(script.ToInteger(ret))
		n.w.Int(script.ToInteger(ttl))
		return true
	}
	n.cmd(cmdLowerPttl, key)
	if b = n.call(2); b == nil {
		return true
	}
	pttl, ok := n.intReply(b)
	if !ok {
		return n.internal()
	}
	n.w.Array(2)
	n.w.Int(script.ToInteger(ret))
	n.w.Int(script.ToInteger(float64(pttl)))
	return true
}

// nativeUlulePeek's calls: 0 get, 1 pttl.
func nativeUlulePeek(n *nativeRun) bool {
	if len(n.keys) < 1 {
		return false
	}
	key := n.keys[0]
	stored, present, ok := n.peekNumber(key)
	if !ok {
		return false // tonumber(v) nil would leave a hole in the reply
	}
	n.cmd(cmdLowerGet, key)
	b := n.call(0)
	if b == nil {
		return true
	}
	count, found, ok := getPeeked(b, stored, present)
	if !ok {
		return n.internal()
	}
	if !found {
		n.w.Array(2)
		n.w.Int(0)
		n.w.Int(0)
		return true
	}
	n.cmd(cmdLowerPttl, key)
	if b = n.call(1); b == nil {
		return true
	}
	pttl, ok := n.intReply(b)
	if !ok {
		return n.internal()
	}
	n.w.Array(2)
	n.w.Int(script.ToInteger(count))
	n.w.Int(script.ToInteger(float64(pttl)))
	return true
}
