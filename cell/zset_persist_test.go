package cell

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/zsetlite"
)

// TestPersistWideZSets: large sorted sets, stored member by member and
// written as deltas, come back exactly across restarts, whatever the
// sequence of writes, conversions and renames before them.
func TestPersistWideZSets(t *testing.T) {
	// window appends n members at the tail of key from start and trims
	// the head below start-keep, as a sliding window does.
	window := func(key string, start, n, keep int) [][]string {
		var out [][]string
		for i := start; i < start+n; i++ {
			out = append(out, []string{"ZADD", key, strconv.Itoa(i), "m" + strconv.Itoa(i)})
			out = append(out, []string{"ZREMRANGEBYSCORE", key, "-inf", "(" + strconv.Itoa(i-keep)})
		}
		return out
	}
	grow := func(key string, n int) []string {
		cmd := []string{"ZADD", key}
		for i := range n {
			cmd = append(cmd, strconv.Itoa(i), fmt.Sprintf("g%04d", i))
		}
		return cmd
	}
	restart := [][]string{{"restart"}}
	steps := func(parts ...[][]string) [][]string {
		var out [][]string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name  string
		steps [][]string
	}{
		{"a window built by many ZADD and ZREMRANGEBYSCORE", steps(window("w", 0, 1500, 1000), restart,
			window("w", 1500, 300, 1000), restart)},
		{"packed to wide to packed to wide", steps([][]string{grow("z", 100)}, restart, [][]string{grow("z", 400)}, restart,
			[][]string{{"ZREMRANGEBYRANK", "z", "0", "349"}}, restart, [][]string{grow("z", 300)}, restart)},
		{"every member-changing command on a wide set", steps([][]string{grow("z", 600)}, restart, [][]string{
			{"ZREM", "z", "g0001", "g0002", "nope"}, {"ZINCRBY", "z", "1000", "g0003"}, {"ZADD", "z", "XX", "CH", "-5", "g0004"},
			{"ZPOPMIN", "z", "3"}, {"ZPOPMAX", "z", "2"}, {"ZREMRANGEBYLEX", "z", "[g0100", "(g0150"},
			{"ZREMRANGEBYRANK", "z", "-10", "-5"}, {"ZMPOP", "1", "z", "MIN", "COUNT", "4"}, {"PEXPIRE", "z", "3600000"},
		}, restart)},
		{"a wide set deleted, recreated small, grown again", steps([][]string{grow("z", 300)}, restart,
			[][]string{{"DEL", "z"}, {"ZADD", "z", "1", "only"}}, restart, [][]string{grow("z", 260)}, restart)},
		{"a wide set replaced by a string and back", steps([][]string{grow("z", 300), {"SET", "z", "str"}}, restart,
			[][]string{{"DEL", "z"}, grow("z", 280)}, restart)},
		{"renames, also within one transaction", steps([][]string{grow("a", 300), {"ZADD", "a", "7", "x"}, {"RENAME", "a", "b"},
			{"ZADD", "b", "8", "y"}}, restart, [][]string{{"MULTI"}, {"RENAME", "b", "c"}, {"ZADD", "c", "9", "z"},
			{"RENAME", "c", "b"}, {"ZREM", "b", "x"}, {"EXEC"}}, restart, [][]string{grow("a", 256), {"RENAME", "a", "b"}}, restart)},
		{"a wide set emptied", steps([][]string{grow("z", 300)}, restart, [][]string{{"ZREMRANGEBYRANK", "z", "0", "-1"},
			{"SET", "z2", "x"}}, restart)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			srv, stop := openServer(t, dir, nil)
			c := dial(t, srv)
			for _, cmd := range tt.steps {
				if cmd[0] != "restart" {
					if r := c.do(cmd...); strings.HasPrefix(r, "-") {
						t.Fatalf("%v: %s", cmd, r)
					}
					continue
				}
				want := dumpKeyspace(srv)
				stop()
				srv, stop = openServer(t, dir, nil)
				sameKeys(t, dumpKeyspace(srv), want)
				c = dial(t, srv)
			}
		})
	}
}

// TestWindowIntDeltas: zsetlite's AppendIntDeltas, which appendStored
// uses for a window, gives the bytes persist.ZSetInts.Add gives member by
// member, for packed and tree windows.
func TestWindowIntDeltas(t *testing.T) {
	for _, n := range []int{0, 1, 100, 1000} {
		s := zsetlite.New(zsetlite.DefaultConfig())
		var w persist.ZSetInts
		want := w.Head(nil, 42, n)
		for i := range n {
			v := 1_700_000_000_000 + int64(i*i) - 5000
			s.Put([]byte(strconv.FormatInt(v, 10)), float64(v))
			want = w.Add(want, v)
		}
		got := w.Head(nil, 42, s.Len())
		got, ok := s.AppendIntDeltas(got)
		if !ok || string(got) != string(want) {
			t.Errorf("%d members: AppendIntDeltas %v %x, ZSetInts %x", n, ok, got, want)
		}
	}
}

// TestPersistDeltaOverExpiredSnapshot: a set whose expiry the snapshot
// holds as passed, but which the log then changed in place (and so kept
// alive, with a later expiry), comes back whole: its members from the
// snapshot and the log's changes over them. Loading must not drop the
// snapshot's copy before the log's records have been applied.
func TestPersistDeltaOverExpiredSnapshot(t *testing.T) {
	for _, wide := range []bool{false, true} {
		t.Run(fmt.Sprintf("wide=%v", wide), func(t *testing.T) {
			dir := t.TempDir()
			srv, stop := openServer(t, dir, nil)
			c := dial(t, srv)
			n := 3
			if wide {
				n = keyspace.WideMinEntries + 10
			}
			cmd := []string{"ZADD", "k"}
			for i := range n {
				cmd = append(cmd, strconv.Itoa(i), fmt.Sprintf("m%04d", i))
			}
			c.do(cmd...)
			c.do("PEXPIRE", "k", "300")
			c.do("SET", "gone", "x", "PX", "300") // expires for good
			if got := c.do("SAVE"); got != "+OK\r\n" {
				t.Fatalf("SAVE: %q", got)
			}
			// In place, after the snapshot: only the log has these, as
			// one record of the set's changes (a W1 block's form: the
			// expiry rides on the set's head).
			c.do("MULTI")
			c.do("ZADD", "k", "1000", "new")
			c.do("ZREM", "k", "m0001")
			c.do("PEXPIRE", "k", "3600000")
			if got := c.do("EXEC"); got != "*3\r\n:1\r\n:1\r\n:1\r\n" {
				t.Fatalf("EXEC: %q", got)
			}
			live, srv := restartPastExpiry(t, srv, stop, dir)
			sameKeys(t, dumpKeyspace(srv), live)
		})
	}
}

// TestPersistScoreRangeReplay: what a ZREMRANGEBYSCORE removed, replayed
// from the log, comes back exactly for every form of bound: members on
// each bound, excluded or not, fractions, infinities, a removal that
// empties the set, one followed in the same transaction by an add inside
// the range, and a set stored member by member in the snapshot.
func TestPersistScoreRangeReplay(t *testing.T) {
	tests := []struct {
		name string
		cmds [][]string
	}{
		{"inclusive", [][]string{{"ZREMRANGEBYSCORE", "z", "2", "4"}}},
		{"exclusive min", [][]string{{"ZREMRANGEBYSCORE", "z", "(2", "4"}}},
		{"exclusive max", [][]string{{"ZREMRANGEBYSCORE", "z", "2", "(4"}}},
		{"both exclusive", [][]string{{"ZREMRANGEBYSCORE", "z", "(2", "(4"}}},
		{"fractions", [][]string{{"ZREMRANGEBYSCORE", "z", "1.5", "(3.5"}}},
		{"infinities", [][]string{{"ZREMRANGEBYSCORE", "z", "-inf", "(2"}, {"ZREMRANGEBYSCORE", "z", "(5", "+inf"}}},
		{"negative and -0", [][]string{{"ZREMRANGEBYSCORE", "z", "-1", "-0"}}},
		{"empties the set", [][]string{{"ZREMRANGEBYSCORE", "z", "-inf", "+inf"}}},
		{"window in a transaction", [][]string{
			{"MULTI"}, {"ZREMRANGEBYSCORE", "w", "0", "1700000000002"}, {"ZADD", "w", "1", "1"},
			{"ZREMRANGEBYSCORE", "w", "(1700000000003", "1700000000004"}, {"PEXPIRE", "w", "3600000"}, {"EXEC"},
		}},
		{"wide set", [][]string{{"ZREMRANGEBYSCORE", "big", "(10", "20"}, {"ZREMRANGEBYSCORE", "big", "100", "+inf"}}},
	}
	// Checkpoints of records after the first: "big" is stored wide by
	// the second SAVE below.
	defer func(n int) { rewriteShare = n }(rewriteShare)
	rewriteShare = 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			srv, stop := openServer(t, dir, nil)
			c := dial(t, srv)
			setup := [][]string{
				{"ZADD", "z", "-1", "neg", "0", "zero", "1", "one", "2", "two", "3", "three", "3.5", "threehalf", "4", "four", "5", "five", "6", "six"},
				{"ZADD", "w", "1700000000001", "1700000000001", "1700000000002", "1700000000002", "1700000000003", "1700000000003", "1700000000004", "1700000000004"},
			}
			big := []string{"ZADD", "big"}
			for i := range 200 {
				big = append(big, strconv.Itoa(i), fmt.Sprintf("m%03d", i))
			}
			setup = append(setup, big, []string{"SAVE"}, []string{"ZADD", "big", "1000", "m1000"}, []string{"SAVE"})
			for _, cmd := range setup {
				if r := c.do(cmd...); strings.HasPrefix(r, "-") {
					t.Fatalf("%v: %s", cmd, r)
				}
			}
			if z := srv.ks.Peek(0, []byte("big")).Obj().(*keyspace.ZSet); !z.StoredWide() {
				t.Fatal("big is not stored wide")
			}
			for _, cmd := range tt.cmds {
				if r := c.do(cmd...); strings.HasPrefix(r, "-") {
					t.Fatalf("%v: %s", cmd, r)
				}
			}
			crashRestart(t, srv, stop, dir, nil)
		})
	}
}
