package cell

import (
	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/cell/script"
)

// W6, per-minute counts in a ring of list slots, as the integration tests
// ship it (w6_ring.lua). KEYS: the list, the key of the last slot used.
// ARGV: the last slot, the current slot, the ring size. It adds one to the
// current slot (or, on a new slot, zeroes the skipped ones and starts it
// at 1), records the slot, and returns the count as a string.

func init() {
	registerNative("c601c24fbb865b449b6edc9e3b42b0de5eebb95c", "W6 ring (w6_ring.lua)", nativeRing, 9, 14, 18, 19)
}

var (
	cmdLINDEX = nativeCommand("LINDEX")
	cmdLSET   = nativeCommand("LSET")
	argZero   = []byte("0")
)

// ringMaxSize bounds the rings run natively: the loop over skipped slots
// is the one unbounded part of the script.
const ringMaxSize = 1 << 16

// nativeRing's calls: 0 LINDEX, 1 LSET of a skipped slot, 2 LSET of the
// current slot, 3 SET.
func nativeRing(n *nativeRun) bool {
	if len(n.keys) < 2 || len(n.argv) < 3 {
		return false
	}
	last, ok1 := plainNumber(n.argv[0])
	current, ok2 := plainNumber(n.argv[1])
	size, ok3 := plainNumber(n.argv[2])
	// Whole slots inside the ring: anything else may never reach the
	// current slot, and loops until SCRIPT KILL, in Lua.
	if !(ok1 && ok2 && ok3) || size < 1 || size > ringMaxSize ||
		!ringSlot(last, size) || !ringSlot(current, size) {
		return false
	}
	list := n.keys[0]
	var count float64
	if last == current {
		// tonumber(LINDEX) + 1 fails in Lua arithmetic unless the slot
		// holds a number: Lua's error to give.
		if !n.peekListNumber(list, int(current)) {
			return false
		}
		n.cmd(cmdLINDEX, list)
		n.num(current)
		b := n.call(0)
		if b == nil {
			return true
		}
		v, _, ok := replyBulk(b)
		if !ok || v == nil {
			return n.internal()
		}
		c, ok := plainNumber(v)
		if !ok {
			return n.internal() // peekListNumber saw it
		}
		count = c + 1
	} else {
		count = 1
		for slot := int64(last+1) % int64(size); slot != int64(current); slot = (slot + 1) % int64(size) {
			n.cmd(cmdLSET, list)
			n.num(float64(slot))
			n.arg(argZero)
			if n.call(1) == nil {
				return true
			}
		}
	}
	text := script.FormatNumber(count)
	n.cmd(cmdLSET, list)
	n.num(current)
	n.arg([]byte(text))
	if n.call(2) == nil {
		return true
	}
	n.cmd(cmdSET, n.keys[1])
	n.num(current)
	if n.call(3) == nil {
		return true
	}
	n.w.BulkString(text)
	return true
}

// ringSlot: f is a whole slot of a ring of size slots.
func ringSlot(f, size float64) bool { return f >= 0 && f < size && f == float64(int64(f)) }

// peekListNumber: key is a list whose element i is a number plainNumber
// reads. It changes nothing.
func (n *nativeRun) peekListNumber(key []byte, i int) bool {
	x := n.x
	e := x.srv.ks.PeekLocked(n.db, key)
	if e == nil || e.Expired(x.Now()) || e.IsString() {
		return false
	}
	l, ok := e.Obj().(*keyspace.List)
	if !ok || i >= l.Len() {
		return false
	}
	_, ok = plainNumber(l.At(i))
	return ok
}
