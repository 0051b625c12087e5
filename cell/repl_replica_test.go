package cell

import (
	"bufio"
	"strings"
	"testing"
)

// TestReadStreamCommand: each command comes back with the bytes it took
// as they came (a keepalive newline before it included), which a replica
// feeds to its own backlog so that its offsets stay the master's.
func TestReadStreamCommand(t *testing.T) {
	tests := []struct {
		name, in string
		args     []string
		raw      string
		err      bool
	}{
		{"one", "*1\r\n$4\r\nPING\r\n", []string{"PING"}, "*1\r\n$4\r\nPING\r\n", false},
		{"keepalive", "\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n", []string{"DEL", "k"}, "\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n", false},
		{"empty bulk", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", []string{"SET", "k", ""}, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", false},
		{"inline", "PING\r\n", nil, "", true},
		{"bad bulk", "*1\r\n+PING\r\n", nil, "", true},
		{"short", "*1\r\n$4\r\nPI", nil, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var raw []byte
			args, err := readStreamCommand(bufio.NewReader(strings.NewReader(tc.in)), &raw)
			if tc.err {
				if err == nil {
					t.Fatalf("no error, args %q", args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tc.raw {
				t.Errorf("raw %q, want %q", raw, tc.raw)
			}
			if len(args) != len(tc.args) {
				t.Fatalf("args %q, want %q", args, tc.args)
			}
			for i := range args {
				if string(args[i]) != tc.args[i] {
					t.Errorf("arg %d %q, want %q", i, args[i], tc.args[i])
				}
			}
		})
	}
}

// TestCheckReplicaOf: the replicaof line as Redis reads it.
func TestCheckReplicaOf(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"127.0.0.1 6379", "127.0.0.1 6379", ""},
		{"no one", "", ""},
		{"NO ONE", "", ""},
		{"host 70000", "", "Invalid master port"},
		{"host x", "", "Invalid master port"},
		{"host", "", "wrong number of arguments"},
		{"a b c", "", "wrong number of arguments"},
	}
	for _, tc := range tests {
		got, err := checkReplicaOf(tc.in)
		if got != tc.want || err != tc.err {
			t.Errorf("checkReplicaOf(%q) = %q, %q; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
