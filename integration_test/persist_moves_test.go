package integration_test

import (
	"testing"
)

// TestPersistMoves: commands that move values between keys or databases
// (LMOVE, RPOPLPUSH, LMPOP, COPY, MOVE) are in the effect log: after a SIGKILL, which
// leaves only the log to replay, the restarted server reads back what was
// there before, whether it stopped with SIGTERM or was killed.
func TestPersistMoves(t *testing.T) {
	cellserverBinary(t)
	for _, stop := range []struct {
		name string
		fn   func(*process)
	}{{"kill", (*process).kill}, {"sigterm", (*process).Stop}} {
		t.Run(stop.name, func(t *testing.T) {
			dir := t.TempDir()
			p := cellOnDir(t, dir, "--appendfsync", "always")
			c := mustDial(t, p)
			for _, cmd := range persistMoveWrites {
				mustDo(t, c, cmd...)
			}
			var before []string
			for _, r := range persistMoveReads {
				before = append(before, mustDo(t, c, r...))
			}
			stop.fn(p)
			p2 := cellOnDir(t, dir, "--appendfsync", "always")
			c2 := mustDial(t, p2)
			for i, r := range persistMoveReads {
				if got := mustDo(t, c2, r...); got != before[i] {
					t.Errorf("%q after restart: %q, before: %q", r, got, before[i])
				}
			}
		})
	}
}

// persistMoveWrites builds the state TestPersistMoves reads back;
// persistMoveReads reads it, each database in turn.
var persistMoveWrites = [][]string{
	{"RPUSH", "src", "a", "b", "c", "d", "e"},
	{"LMOVE", "src", "dst", "LEFT", "RIGHT"},
	{"LMOVE", "src", "src", "LEFT", "RIGHT"}, // rotation
	{"RPOPLPUSH", "src", "dst"},
	{"RPUSH", "one", "x"},
	{"LMOVE", "one", "gone", "LEFT", "LEFT"}, // one goes
	{"LMPOP", "2", "nokey", "src", "RIGHT", "COUNT", "2"},
	{"RPUSH", "big", "1", "2", "3"},
	{"LMPOP", "1", "big", "LEFT", "COUNT", "5"}, // big goes
	{"HSET", "h", "f", "1", "g", "2"}, {"PEXPIREAT", "h", "4102444800000"},
	{"COPY", "h", "h2"}, {"COPY", "h", "h", "DB", "3"}, {"COPY", "dst", "h2", "DB", "3", "REPLACE"},
	{"ZADD", "z", "1", "a", "2", "b"}, {"SET", "s", "v\x00"},
	{"MOVE", "z", "4"}, {"MOVE", "s", "3"}, {"MOVE", "h2", "3"}, // h2 taken in 3: stays
}

var persistMoveReads = [][]string{
	{"SELECT", "0"}, {"LRANGE", "src", "0", "-1"}, {"LRANGE", "dst", "0", "-1"},
	{"LRANGE", "gone", "0", "-1"}, {"EXISTS", "one", "big", "z", "s"}, {"DBSIZE"},
	{"HGETALL", "h2"}, {"PEXPIRETIME", "h2"},
	{"SELECT", "3"}, {"HGETALL", "h"}, {"PEXPIRETIME", "h"}, {"LRANGE", "h2", "0", "-1"}, {"GET", "s"}, {"DBSIZE"},
	{"SELECT", "4"}, {"ZRANGE", "z", "0", "-1", "WITHSCORES"}, {"DBSIZE"},
}
