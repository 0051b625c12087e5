package cell

import "testing"

// TestParseStreamCommand: each command comes back with the bytes it took
// (a keepalive newline before it included), which a replica feeds to its
// own backlog so that its offsets stay the master's; a command cut short
// takes nothing yet.
func TestParseStreamCommand(t *testing.T) {
	tests := []struct {
		name, in string
		args     []string
		n        int
		err      bool
	}{
		{"one", "*1\r\n$4\r\nPING\r\n", []string{"PING"}, 14, false},
		{"keepalive", "\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n", []string{"DEL", "k"}, 21, false},
		{"empty bulk", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", []string{"SET", "k", ""}, 26, false},
		{"next command after", "*1\r\n$4\r\nPING\r\n*1", []string{"PING"}, 14, false},
		{"binary bulk", "*2\r\n$3\r\nGET\r\n$4\r\na\r\nb\r\n", []string{"GET", "a\r\nb"}, 23, false},
		{"short header", "*1\r", nil, 0, false},
		{"short bulk header", "*1\r\n$4", nil, 0, false},
		{"short bulk", "*1\r\n$4\r\nPI", nil, 0, false},
		{"short bulk end", "*1\r\n$4\r\nPING\r", nil, 0, false},
		{"only keepalives", "\n\r\n", nil, 0, false},
		{"inline", "PING\r\n", nil, 0, true},
		{"bad bulk", "*1\r\n+PING\r\n", nil, 0, true},
		{"negative bulk", "*1\r\n$-1\r\n", nil, 0, true},
		{"empty array", "*0\r\n", nil, 0, true},
		{"bad count", "*x\r\n", nil, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv := [][]byte{[]byte("before")}
			argv, n, err := parseStreamCommand([]byte(tc.in), argv)
			if tc.err {
				if err == nil {
					t.Fatalf("no error, args %q", argv)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.n {
				t.Errorf("took %d bytes, want %d", n, tc.n)
			}
			if string(argv[0]) != "before" || len(argv)-1 != len(tc.args) {
				t.Fatalf("argv %q, want \"before\" then %q", argv, tc.args)
			}
			for i, a := range argv[1:] {
				if string(a) != tc.args[i] {
					t.Errorf("arg %d %q, want %q", i, a, tc.args[i])
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
