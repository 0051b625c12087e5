package cell

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestElemScanPick: compact values and values of at most COUNT elements
// come whole with cursor 0; larger ones in pages whose walk returns each
// element present throughout exactly once, while others come and go.
func TestElemScanPick(t *testing.T) {
	elems := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("m%d", i)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		n, count  int
		compact   bool
		pat       string
		wantWhole bool
	}{
		{"compact", 300, 10, true, "", true},
		{"at most COUNT", 10, 10, false, "", true},
		{"COUNT above the size", 200, 500, false, "", true},
		{"large", 1000, 10, false, "", false},
		{"large, COUNT 1", 100, 1, false, "", false},
		{"large, MATCH", 1000, 10, false, "m1*", false},
		{"large, big COUNT", 1000, 300, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := elems(tc.n)
			o := elemScan{count: tc.count, pat: []byte(tc.pat), usePat: tc.pat != ""}
			seen := map[string]int{}
			var cursor uint64
			calls := 0
			for {
				cur := set // a call sees the value as it is now
				idx, next := o.pick(len(cur), tc.compact, cursor, func(i int) []byte { return []byte(cur[i]) })
				calls++
				for _, i := range idx {
					seen[cur[i]]++
				}
				if calls == 1 && tc.wantWhole != (next == 0) {
					t.Fatalf("first call: cursor %d, want whole=%v", next, tc.wantWhole)
				}
				if next == 0 {
					break
				}
				if next >= 1<<53+1 {
					t.Fatalf("cursor %d: not exact as a double", next)
				}
				if calls > elemScanPages+1 {
					t.Fatalf("walk not over after %d calls", calls)
				}
				cursor = next
				if !tc.wantWhole {
					// Elements are added between calls.
					set = append(set, fmt.Sprintf("x%d", calls))
				}
			}
			for _, m := range elems(tc.n) {
				want := 1
				if tc.pat != "" && !strings.HasPrefix(m, "m1") {
					want = 0
				}
				if seen[m] != want {
					t.Fatalf("%s returned %d times, want %d", m, seen[m], want)
				}
			}
			for m, n := range seen {
				if n > 1 {
					t.Fatalf("%s returned %d times", m, n)
				}
			}
		})
	}
}

// TestElemScanWalk: SSCAN, HSCAN and ZSCAN over values too large for
// Redis's compact encodings page with a non-zero cursor, and a walk
// returns each element once while others are added and removed.
func TestElemScanWalk(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	const n = 1000
	for i := range n {
		c.do("SADD", "s", fmt.Sprintf("member%d", i))
		c.do("HSET", "h", fmt.Sprintf("key%d", i), "hello")
		c.do("ZADD", "z", strconv.Itoa(i), fmt.Sprintf("member%d", i))
	}
	for _, tc := range []struct {
		cmd, key string
		pairs    bool
		del, add func(i int) []string
		prefix   string
	}{
		{"SSCAN", "s", false,
			func(i int) []string { return []string{"SREM", "s", fmt.Sprintf("gone%d", i)} },
			func(i int) []string { return []string{"SADD", "s", fmt.Sprintf("gone%d", i)} }, "member"},
		{"HSCAN", "h", true,
			func(i int) []string { return []string{"HDEL", "h", fmt.Sprintf("gone%d", i)} },
			func(i int) []string { return []string{"HSET", "h", fmt.Sprintf("gone%d", i), "v"} }, "key"},
		{"ZSCAN", "z", true,
			func(i int) []string { return []string{"ZREM", "z", fmt.Sprintf("gone%d", i)} },
			func(i int) []string { return []string{"ZADD", "z", "5", fmt.Sprintf("gone%d", i)} }, "member"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			seen := map[string]int{}
			cursor := "0"
			for call := 0; ; call++ {
				lines := strings.Split(c.do(tc.cmd, tc.key, cursor), "\r\n")
				cursor = lines[2]
				m, _ := strconv.Atoi(strings.TrimPrefix(lines[3], "*"))
				step := 1
				if tc.pairs {
					step = 2
				}
				for i := 0; i < m; i += step {
					seen[lines[5+2*i]]++
				}
				if call == 0 && (cursor == "0" || m == 0) {
					t.Fatalf("first call: cursor %s, %d items", cursor, m)
				}
				if cursor == "0" {
					break
				}
				if call > elemScanPages+5 {
					t.Fatal("walk never ends")
				}
				c.do(tc.add(call)...)
				c.do(tc.del(call - 1)...)
			}
			for i := range n {
				if k := fmt.Sprintf("%s%d", tc.prefix, i); seen[k] != 1 {
					t.Fatalf("%s returned %d times", k, seen[k])
				}
			}
		})
	}
}
