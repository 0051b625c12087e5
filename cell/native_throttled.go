package cell

// throttled/throttled v2's go-redis store: its compare-and-swap of the
// GCRA state, sent by EVAL. KEYS[1] the state; ARGV: the value expected,
// the new value, the TTL in seconds. Replies 1 (swapped), 0 (another
// value), or the error "key does not exist".

func init() {
	registerNative("ebd682e30de074a6919bde872b507734c7c3ebe5", "throttled goredisstore CAS", nativeThrottledCAS, 2, 9)
}

var (
	cmdLowerGet   = nativeCommand("get")
	cmdLowerSetex = nativeCommand("setex")
)

// nativeThrottledCAS's calls: 0 get, 1 setex.
func nativeThrottledCAS(n *nativeRun) bool {
	// Without ARGV[2] or [3] the setex would fail on a nil argument:
	// Lua's error to give.
	if len(n.keys) < 1 || len(n.argv) < 3 {
		return false
	}
	key := n.keys[0]
	n.cmd(cmdLowerGet, key)
	b := n.call(0)
	if b == nil {
		return true
	}
	v, _, ok := replyBulk(b)
	if !ok {
		return n.internal()
	}
	switch {
	case v == nil:
		// redis.error_reply("key does not exist"): not a command's error,
		// so the script's error statistics count it.
		const msg = "key does not exist"
		n.w.Error(msg)
		n.out.Failed = true
		n.out.Errors = append(n.out.Errors, msg)
	case string(v) != string(n.argv[0]):
		n.w.Int(0)
	default:
		n.cmd(cmdLowerSetex, key, n.argv[2], n.argv[1])
		if n.call(1) == nil {
			return true
		}
		n.w.Int(1)
	}
	return true
}
