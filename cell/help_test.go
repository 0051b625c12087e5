package cell

import (
	"strings"
	"testing"
)

// TestHelpListsServedSubcommands: every subcommand a container's HELP
// names (a line that does not start with a space: "LIST [LIBRARYNAME
// PATTERN] [WITHCODE]") is one the server has, so HELP never offers what
// then answers "unknown subcommand".
func TestHelpListsServedSubcommands(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	for _, name := range commandNames() {
		cmd := commands[name]
		if cmd.Sub["help"] == nil {
			continue
		}
		reply := c.do(name, "HELP")
		if strings.HasPrefix(reply, "-") {
			continue // CLUSTER HELP outside cluster mode
		}
		lines := strings.Split(reply, "\r\n")
		if len(lines) < 3 {
			t.Errorf("%s HELP: %q", name, reply)
			continue
		}
		n := 0
		for _, l := range lines[2:] { // past the header
			if !strings.HasPrefix(l, "+") || strings.HasPrefix(l, "+ ") || strings.HasPrefix(l, "+(") {
				continue
			}
			sub := strings.ToLower(strings.Fields(l[1:])[0])
			sub = strings.TrimSuffix(sub, ",")
			n++
			if cmd.Sub[sub] == nil {
				t.Errorf("%s HELP lists %s, which is not served: %q", name, sub, l)
			}
		}
		if n < 2 {
			t.Errorf("%s HELP lists %d subcommands: %q", name, n, reply)
		}
	}
}
