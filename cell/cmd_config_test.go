package cell

import (
	"strings"
	"testing"
)

// CONFIG SET of the live settings changes the server's behaviour.
func TestConfigSetLive(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	steps := []struct{ args, want string }{
		{"config set requirepass s3cret", "+OK\r\n"},
		{"config get requirepass", "*2\r\n$11\r\nrequirepass\r\n$6\r\ns3cret\r\n"},
		// This connection stays authenticated, as in Redis.
		{"ping", "+PONG\r\n"},
		{"config set maxclients 1", "+OK\r\n"},
		{"config get maxclients", "*2\r\n$10\r\nmaxclients\r\n$1\r\n1\r\n"},
		{"config set proto-max-bulk-len 2mb", "+OK\r\n"},
		{"config get proto-max-bulk-len", "*2\r\n$18\r\nproto-max-bulk-len\r\n$7\r\n2097152\r\n"},
	}
	for _, s := range steps {
		if got := c.do(strings.Fields(s.args)...); got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
	if got := srv.live.protoMaxBulkLen.Load(); got != 2<<20 {
		t.Errorf("protoMaxBulkLen = %d", got)
	}
	// maxclients 1: a second connection is refused.
	d := dial(t, srv)
	if got := d.read(); got != "-"+ErrMaxClients+"\r\n" {
		t.Errorf("second client: %q", got)
	}
	c.do("config", "set", "maxclients", "10")
	// A new connection now needs the password.
	e := dial(t, srv)
	if got := e.do("ping"); got != "-"+ErrNoAuth+"\r\n" {
		t.Errorf("new client without AUTH: %q", got)
	}
	if got := e.do("auth", "s3cret"); got != "+OK\r\n" {
		t.Errorf("AUTH: %q", got)
	}
	c.do("config", "set", "requirepass", "")
	f := dial(t, srv)
	if got := f.do("ping"); got != "+PONG\r\n" {
		t.Errorf("after clearing requirepass: %q", got)
	}
}

// A CONFIG SET with one bad value changes nothing.
func TestConfigSetAtomic(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	got := c.do("config", "set", "maxclients", "77", "timeout", "-1")
	if !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'timeout')") {
		t.Fatalf("got %q", got)
	}
	if n := srv.live.maxClients.Load(); n != 10000 {
		t.Errorf("maxclients changed to %d", n)
	}
}

func TestConfigParse(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{"maxmemory", "10mb", "10485760", ""},
		{"maxmemory", "10MB", "10485760", ""},
		{"maxmemory", "1k", "1000", ""},
		{"maxmemory", "-1", "", "argument must be a memory value"},
		{"hz", "5", "5", ""},
		{"hz", "05", "", "argument couldn't be parsed into an integer"},
		{"hz", "-1", "", "argument must be between 0 and 2147483647 inclusive"},
		{"appendonly", "YES", "yes", ""},
		{"appendonly", "1", "", "argument must be 'yes' or 'no'"},
		{"maxmemory-policy", "AllKeys-LRU", "allkeys-lru", ""},
		{"save", "", "", ""},
		{"save", "60 1", "60 1", ""},
		{"save", "60  1", "", "Invalid save parameters"},
		{"save", "60", "", "Invalid save parameters"},
		{"notify-keyspace-events", "KEA", "", msgNoKeyspaceEvents},
		{"notify-keyspace-events", "Kx", "", msgNoKeyspaceEvents},
		{"notify-keyspace-events", "nmKEd", "", msgNoKeyspaceEvents},
		{"notify-keyspace-events", "Em", "", msgNoKeyspaceEvents},
		{"notify-keyspace-events", "g$lshzxetdm", "Am", ""}, // no K or E: publishes nothing
		{"notify-keyspace-events", "EK", "KE", ""},          // no class: publishes nothing
		{"notify-keyspace-events", "", "", ""},
		{"notify-keyspace-events", "q", "", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."},
		{"list-max-listpack-size", "-2", "-2", ""},
	}
	for _, tc := range tests {
		p := configParamByName(tc.name)
		got, err := p.parse(tc.in)
		if got != tc.want || err != tc.err {
			t.Errorf("%s %q: got (%q, %q), want (%q, %q)", tc.name, tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestConfigGetPatterns(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	tests := []struct{ args, want string }{
		{"config get nosuch", "*0\r\n"},
		{"config get HZ", "*2\r\n$2\r\nHZ\r\n$2\r\n10\r\n"},
		{"config get hz hz HZ", "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n"},
		{"config get lua-time-limit", "*2\r\n$14\r\nlua-time-limit\r\n$4\r\n5000\r\n"},
		{"config get slowlog-*", "*4\r\n$23\r\nslowlog-log-slower-than\r\n$5\r\n10000\r\n$15\r\nslowlog-max-len\r\n$3\r\n128\r\n"},
		{"config get databases", "*2\r\n$9\r\ndatabases\r\n$2\r\n16\r\n"},
	}
	for _, tc := range tests {
		if got := c.do(strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.args, got, tc.want)
		}
	}
	c.do("hello", "3")
	if got, want := c.do("config", "get", "hz"), "%1\r\n$2\r\nhz\r\n$2\r\n10\r\n"; got != want {
		t.Errorf("RESP3 CONFIG GET: got %q, want %q", got, want)
	}
}
