package script

import (
	"context"
	"testing"

	"github.com/cellserver/cellserver/resp"
)

// TestArgTablesFresh: KEYS and ARGV are reused between runs, yet each run
// sees them as fresh arrays whatever the run before did to them.
func TestArgTablesFresh(t *testing.T) {
	const probe = `local n = 0 for _ in pairs(KEYS) do n = n + 1 end
return {#KEYS, n, KEYS[1], KEYS[2], tostring(KEYS[3]), tostring(getmetatable(KEYS)), tostring(KEYS.x), #ARGV, ARGV[1]}`
	want := "*9\r\n:2\r\n:2\r\n$1\r\na\r\n$1\r\nb\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n:1\r\n$1\r\nv\r\n"
	for _, mutate := range []string{
		"", "KEYS[1] = nil", "KEYS[2] = nil ARGV[1] = nil", "KEYS[5] = 'x'", "KEYS.x = 1", "KEYS[0] = 1",
		"setmetatable(KEYS, {__index = function() return 'meta' end})", "table.insert(KEYS, 'y')",
		"KEYS[100] = 1", "for i = 1, #KEYS do KEYS[i] = nil end", "KEYS[1.5] = 1", "KEYS.x = 1 KEYS.x = nil",
		"table.remove(KEYS, 1)", "ARGV[3] = 'z'",
	} {
		// Twice: the mutating run may be the first with these sizes.
		for range 2 {
			s, err := testEngine.Load([]byte(mutate + " return 1"))
			if err != nil {
				t.Fatal(err)
			}
			testEngine.Run(context.Background(), s, toBytes([]string{"a", "b", "c"}), toBytes([]string{"v", "w"}), &fakeHost{}, resp.NewWriter())
		}
		if got := evalProto(t, 2, probe, []string{"a", "b"}, []string{"v"}); got != want {
			t.Errorf("after %q:\n   got  %q\n   want %q", mutate, got, want)
		}
	}
}

// TestCallArgsCopied: redis.call's arguments reach the host as Redis
// formats them, built in a buffer the state reuses.
func TestCallArgsCopied(t *testing.T) {
	h := &fakeHost{}
	s, err := testEngine.Load([]byte("redis.call('echo', KEYS[1], 1/3, 1700000000000, -0.0, '') return redis.call('echo', ARGV[1], 2^53)"))
	if err != nil {
		t.Fatal(err)
	}
	testEngine.Run(context.Background(), s, toBytes([]string{"k"}), toBytes([]string{"long argument"}), h, resp.NewWriter())
	want := [][]string{{"echo", "k", "0.33333333333333331", "1700000000000", "-0", ""}, {"echo", "long argument", "9007199254740992"}}
	if len(h.calls) != len(want) {
		t.Fatalf("calls %q", h.calls)
	}
	for i := range want {
		if len(h.calls[i]) != len(want[i]) {
			t.Fatalf("call %d: %q, want %q", i, h.calls[i], want[i])
		}
		for j := range want[i] {
			if h.calls[i][j] != want[i][j] {
				t.Errorf("call %d arg %d: %q, want %q", i, j, h.calls[i][j], want[i][j])
			}
		}
	}
}

func TestDecimalInteger(t *testing.T) {
	for _, tc := range []struct {
		s  string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"60", 60, true}, {"1700000000000", 1700000000000, true}, {"-5", -5, true},
		{"007", 7, true}, {"999999999999999", 999999999999999, true}, {"1000000000000000", 0, false},
		{"-0", 0, false}, {"", 0, false}, {"-", 0, false}, {"+5", 0, false}, {" 5", 0, false},
		{"5 ", 0, false}, {"1e3", 0, false}, {"0x10", 0, false}, {"1.0", 0, false},
	} {
		n, ok := decimalInteger(tc.s)
		if n != tc.n || ok != tc.ok {
			t.Errorf("decimalInteger(%q) = %d, %v; want %d, %v", tc.s, n, ok, tc.n, tc.ok)
		}
	}
}
