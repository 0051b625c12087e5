package cell

import (
	"bytes"
	"strings"
	"testing"
)

// applyRules applies space-separated rules to a new user's rules, as ACL
// SETUSER would (selectors over several words merged).
func applyRules(t testing.TB, rules string) (*aclRules, error) {
	r := newRules(false)
	var words [][]byte
	if rules != "" {
		for _, w := range strings.Split(rules, " ") {
			words = append(words, []byte(w))
		}
	}
	ops, open := mergeSelectorArgs(words)
	if open >= 0 {
		return nil, errACLSyntax
	}
	for _, op := range ops {
		if err := r.apply(op, false); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func TestACLRulesDescribe(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		rules, want string
	}{
		{"", "off resetchannels -@all"},
		{"on nopass", "on nopass resetchannels -@all"},
		{"on >a >b >a <b", "on #" + aclHash([]byte("a")) + " resetchannels -@all"},
		{"#" + hash + " nopass", "off nopass resetchannels -@all"},
		{"nopass >x resetpass", "off resetchannels -@all"},
		{"~a %R~b %W~c %RW~d %R~a %W~b", "off ~a ~b %W~c ~d resetchannels -@all"},
		{"%R %W~", "off ~ resetchannels -@all"}, // one pattern, "", both ways
		{"~a allkeys", "off ~* resetchannels -@all"},
		{"&c1 &c2 &c1", "off resetchannels &c1 &c2 -@all"},
		{"&c allchannels", "off &* -@all"},
		{"+@all", "off resetchannels +@all"},
		{"allcommands -get", "off resetchannels +@all -get"},
		{"-@all +@hash", "off resetchannels -@all +@hash"},
		{"+select|0 +select|1", "off resetchannels -@all +select|0 +select|1"},
		{"+select|0 +select", "off resetchannels -@all +select"},
		{"+config|get", "off resetchannels -@all +config|get"},
		{"+GET", "off resetchannels -@all +get"},
		{"on ~* &* +@all reset", "off sanitize-payload resetchannels -@all"},
		{"skip-sanitize-payload", "off skip-sanitize-payload resetchannels -@all"},
		{"(~a +get) (%R~b", "off resetchannels -@all (~a resetchannels -@all +get)"},
		{"(~a +get) clearselectors", "off resetchannels -@all"},
		{`("~a b)`, "off resetchannels -@all (resetchannels -@all)"},
	} {
		if strings.HasSuffix(tc.rules, "(%R~b") {
			// An unclosed selector is refused as a whole.
			if _, err := applyRules(t, tc.rules); err == nil {
				t.Errorf("%q: accepted an unclosed selector", tc.rules)
			}
			continue
		}
		r, err := applyRules(t, tc.rules)
		if err != nil {
			t.Errorf("%q: %v", tc.rules, err)
			continue
		}
		if got := r.describe(); got != tc.want {
			t.Errorf("%q describes as\n  %q, want\n  %q", tc.rules, got, tc.want)
		}
	}
}

func TestACLRulesErrors(t *testing.T) {
	for _, tc := range []struct {
		rules string
		want  error
	}{
		{"+nosuch", errACLUnknown},
		{"-@nosuch", errACLUnknown},
		{"+", errACLUnknown},
		{"bogus", errACLSyntax},
		{"allkeys ~a", errACLKeysAll},
		{"&* &a", errACLChansAll},
		{"<never", errACLNoPass},
		{"#short", errACLBadHash},
		{"!" + strings.Repeat("A", 64), errACLBadHash},
		{"+config|get|x", errACLFirstArg},
		{"+select|", errACLSyntax},
		{"+config|nosuch", errACLUnknown},
		{"%", errACLSyntax},
		{"%~a", errACLSyntax},
		{"%RR~a", errACLSyntax},
		{"~a\x00b", errACLSyntax},
		{"(+nosuch)", errACLUnknown},
	} {
		if _, err := applyRules(t, tc.rules); err != tc.want {
			t.Errorf("%q: error %v, want %v", tc.rules, err, tc.want)
		}
	}
}

func TestACLCheck(t *testing.T) {
	mk := func(rules string) *aclRules {
		r, err := applyRules(t, rules)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	args := func(s string) [][]byte { return bytes.Fields([]byte(s)) }
	for _, tc := range []struct {
		rules, cmd string
		want, at   int
	}{
		{"~* &* +@all", "flushall", aclOK, 0},
		{"~a* -@all +get", "get a1", aclOK, 0},
		{"~a* -@all +get", "get b1", aclDeniedKey, 1},
		{"~a* -@all +get", "set a1 v", aclDeniedCmd, 0},
		{"%R~r* -@all +get +set", "get r1", aclOK, 0},
		{"%R~r* -@all +get +set", "set r1 v", aclDeniedKey, 1},
		{"%W~w* -@all +get +set +exists", "get w1", aclDeniedKey, 1},
		{"%W~w* -@all +get +set +exists", "exists w1", aclOK, 0},
		{"~a* -@all +mget", "mget a1 b1 a2", aclDeniedKey, 2},
		{"-@all +select|0", "select 0", aclOK, 0},
		{"-@all +select|0", "select 1", aclDeniedCmd, 0},
		{"-@all +config|get", "config get x", aclOK, 0},
		{"-@all +config|get", "config set x y", aclDeniedCmd, 0},
		{"-@all +auth", "auth x", aclOK, 0},
		{"-@all", "auth x", aclOK, 0}, // no_auth commands are always allowed
		{"&news.* -@all +publish", "publish news.a x", aclOK, 0},
		{"&news.* -@all +publish", "publish sport x", aclDeniedChannel, 1},
		{"&news.* -@all +psubscribe", "psubscribe news.*", aclOK, 0},
		{"&news.* -@all +psubscribe", "psubscribe news.a*", aclDeniedChannel, 1},
		{"-@all +unsubscribe", "unsubscribe any", aclOK, 0},
		// A second selector allows what the root one does not; the most
		// specific refusal is reported.
		{"~a* -@all +get (~b* +get)", "get b1", aclOK, 0},
		{"~a* -@all +get (~b* +set)", "get c1", aclDeniedKey, 1},
	} {
		a := args(tc.cmd)
		cmd := lookupCommand(commands, a[0])
		if cmd.Sub != nil {
			cmd = lookupCommand(cmd.Sub, a[1])
		}
		res, at := mk(tc.rules).checkCommand(cmd, a)
		if res != tc.want || at != tc.at {
			t.Errorf("%q running %q: (%d, %d), want (%d, %d)", tc.rules, tc.cmd, res, at, tc.want, tc.at)
		}
	}
}

func TestACLDefaultUserIsOpen(t *testing.T) {
	if !defaultRules().isOpen() {
		t.Error("the default user's rules are not open")
	}
	r := defaultRules()
	r.apply([]byte("-flushall"), false)
	if r.isOpen() {
		t.Error("a denied command leaves the rules open")
	}
}

// FuzzACLRules applies arbitrary rules: no panic, and whatever the rules
// are, describing them and applying the description to a new user
// gives the same description (what ACL SAVE and ACL LOAD rely on).
func FuzzACLRules(f *testing.F) {
	for _, s := range []string{
		"on >pw ~a* %R~b %W~c &ch +@all -get",
		"-@all +@read -@string +select|0 +config|get",
		"(~a +get) (%R~b +@hash) clearselectors reset",
		"nopass #" + strings.Repeat("0", 64) + " resetpass allkeys resetkeys allchannels resetchannels",
		"%RW~x % %~ ( ) (( +@ -@ + - | +a|b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		r := newRules(false)
		var words [][]byte
		for _, w := range strings.Split(rules, " ") {
			words = append(words, []byte(w))
		}
		ops, open := mergeSelectorArgs(words)
		if open >= 0 {
			return
		}
		for _, op := range ops {
			r.apply(op, false)
		}
		desc := r.describe()
		// Some rules cannot be written back, in Redis too: a first
		// argument with a space, or a pattern inside a selector with a
		// parenthesis or a quote, which end the selector or its words.
		for _, s := range r.selectors {
			var words []string
			for _, args := range s.firstArgs {
				words = append(words, args...)
			}
			if !s.root {
				words = append(words, s.channels...)
				for _, k := range s.keys {
					words = append(words, k.pattern)
				}
			}
			for _, w := range words {
				if strings.ContainsAny(w, " \"'()\t\r\n\v\f\x00\\") {
					return
				}
			}
		}
		again, err := applyRules(t, desc)
		if err != nil {
			t.Fatalf("rules %q describe as %q, which fails: %v", rules, desc, err)
		}
		if d2 := again.describe(); d2 != desc {
			t.Fatalf("rules %q describe as\n  %q, which describes as\n  %q", rules, desc, d2)
		}
	})
}
