package cell

import (
	"regexp"
	"strings"
	"testing"
)

// TestStatsTallyVisible: a client's commands are counted in commandstats
// and total_commands_processed by the time anything can observe them: a
// later command of the same pipeline that reads stats (also inside EXEC),
// or another client once the replies have arrived.
func TestStatsTallyVisible(t *testing.T) {
	calls := regexp.MustCompile(`cmdstat_(\w+):calls=(\d+)`)
	count := func(info, cmd string) string {
		for _, m := range calls.FindAllStringSubmatch(info, -1) {
			if m[1] == cmd {
				return m[2]
			}
		}
		return "0"
	}
	tests := []struct {
		name     string
		pipeline [][]string
		cmd      string // the command whose count the last reply shows
		want     string
	}{
		{"same pipeline", [][]string{{"ping"}, {"ping"}, {"info", "commandstats"}}, "ping", "2"},
		{"info twice", [][]string{{"info", "commandstats"}, {"info", "commandstats"}}, "info", "1"},
		{"inside exec", [][]string{{"set", "k", "v"}, {"multi"}, {"set", "k", "w"}, {"info", "commandstats"}, {"exec"}}, "set", "2"},
		{"info in exec after info", [][]string{{"multi"}, {"info", "commandstats"}, {"info", "commandstats"}, {"exec"}}, "info", "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, nil)
			c := dial(t, srv)
			c.do("config", "resetstat") // the command table's stats are global
			var req []byte
			for _, args := range tc.pipeline {
				req = append(req, encode(args...)...)
			}
			if _, err := c.nc.Write(req); err != nil {
				t.Fatal(err)
			}
			var last string
			for range tc.pipeline {
				last = c.read()
			}
			if got := count(last, tc.cmd); got != tc.want {
				t.Errorf("%s calls in the pipeline's last reply: %s, want %s\n%s", tc.cmd, got, tc.want, last)
			}
		})
	}

	t.Run("other client", func(t *testing.T) {
		srv := startServer(t, nil)
		a, b := dial(t, srv), dial(t, srv)
		b.do("config", "resetstat")
		var req []byte
		for range 5 {
			req = append(req, encode("ping")...)
		}
		a.nc.Write(req)
		for range 5 {
			a.read()
		}
		info := b.do("info", "all")
		if got := count(info, "ping"); got != "5" {
			t.Errorf("ping calls seen by another client: %s, want 5", got)
		}
		if !strings.Contains(info, "total_commands_processed:6\r\n") { // and RESETSTAT
			t.Errorf("total_commands_processed: want 6 in\n%s", info)
		}
		if !strings.Contains(info, "latency_percentiles_usec_ping:") {
			t.Errorf("no latency percentiles for ping in\n%s", info)
		}
		a.nc.Write(append(encode("multi"), append(encode("incr", "n"), encode("exec")...)...))
		for range 3 {
			a.read()
		}
		if list := b.do("client", "list"); !strings.Contains(list, " cmd=exec ") {
			t.Errorf("CLIENT LIST does not show the other client's last command, EXEC:\n%s", list)
		}
	})
}
