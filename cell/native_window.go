package cell

// W2, the sliding window log in one script, as bench/window.lua and the
// integration tests ship it (the same body with and without its comment
// header): ZADD now, ZCARD, ZREMRANGEBYSCORE the old entries, EXPIRE, and
// the count before the trim. ARGV: now in ms (score and member), the
// window's start in ms, the TTL in seconds.

func init() {
	registerNative("6b7a36260a18b6c189899c6f935fec74d57e44bc", "W2 window (bench/window.lua)", nativeWindow, 1, 2, 3, 4)
	registerNative("62b8e23ab08d34e54c0cb0acf9d793b058363557", "W2 window (w2_window.lua)", nativeWindow, 5, 6, 7, 8)
}

var (
	cmdZADD             = nativeCommand("ZADD")
	cmdZCARD            = nativeCommand("ZCARD")
	cmdZREMRANGEBYSCORE = nativeCommand("ZREMRANGEBYSCORE")
	cmdEXPIRE           = nativeCommand("EXPIRE")
)

// textZero is the Lua number 0 as redis.call passes it.
var textZero = []byte("0")

// nativeWindow's calls: 0 ZADD, 1 ZCARD, 2 ZREMRANGEBYSCORE, 3 EXPIRE.
func nativeWindow(n *nativeRun) bool {
	if len(n.keys) < 1 || len(n.argv) < 3 {
		return false
	}
	// tonumber of each; one that is nil would make its call fail with
	// Lua's argument error, which is Lua's to give.
	now, ok1 := plainNumber(n.argv[0])
	start, ok2 := plainNumber(n.argv[1])
	ttl, ok3 := plainNumber(n.argv[2])
	if !(ok1 && ok2 && ok3) {
		return false
	}
	key := n.keys[0]
	n.cmd(cmdZADD, key)
	n.numArg(now, n.argv[0])
	n.arg(n.argv[0])
	if n.call(0) == nil {
		return true
	}
	n.cmd(cmdZCARD, key)
	b := n.call(1)
	if b == nil {
		return true
	}
	count, ok := n.intReply(b)
	if !ok {
		return n.internal()
	}
	n.cmd(cmdZREMRANGEBYSCORE, key)
	n.arg(textZero)
	n.numArg(start, n.argv[1])
	if n.call(2) == nil {
		return true
	}
	n.cmd(cmdEXPIRE, key)
	n.numArg(ttl, n.argv[2])
	if n.call(3) == nil {
		return true
	}
	n.w.Int(count)
	return true
}
