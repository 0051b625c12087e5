package integration_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// ACL users, compared with redis-server 7.0.15. Each test starts servers
// of its own: users, the ACL log and the default user's rules are
// server-wide state that other tests must not see.

// maskACLRules sorts each run of single-command rules ("+get +set") in
// every string of the reply: Redis writes them in its command hash
// table's order, which changes from run to run. Categories and the
// other rules keep their places.
func maskACLRules(v *value) {
	for _, e := range v.elems {
		maskACLRules(e)
	}
	body, ok := textBody(v)
	if !ok || !strings.Contains(body, "@all") {
		return
	}
	words := strings.Split(body, " ")
	single := func(w string) bool {
		w = strings.TrimPrefix(w, "(")
		return len(w) > 1 && (w[0] == '+' || w[0] == '-') && w[1] != '@'
	}
	for i := 0; i < len(words); {
		if !single(words[i]) {
			i++
			continue
		}
		j := i
		for j < len(words) && single(words[j]) {
			j++
		}
		closing := strings.HasSuffix(words[j-1], ")")
		run := make([]string, j-i)
		for k := range run {
			run[k] = strings.TrimSuffix(words[i+k], ")")
		}
		sort.Strings(run)
		if closing {
			run[len(run)-1] += ")"
		}
		copy(words[i:j], run)
		i = j
	}
	setTextBody(v, strings.Join(words, " "))
}

// maskACLLog hides what differs between two servers in ACL LOG entries:
// the age, and the volatile fields of the client's description.
func maskACLLog(v *value) {
	for _, entry := range v.elems {
		for i := 0; i+1 < len(entry.elems); i += 2 {
			switch entry.elems[i].text {
			case "age-seconds":
				entry.elems[i+1] = &value{kind: '$', text: "<age>"}
			case "client-info":
				maskClientList(entry.elems[i+1])
			}
		}
	}
}

func TestACLSetUserAndGetUser(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		get := func(name string) { c.t.Helper(); c.DoMasked(maskACLRules, "ACL", "GETUSER", name) }
		get("default")
		c.Do("ACL", "GETUSER", "nobody")
		c.Do("ACL", "SETUSER", "alice")
		get("alice")
		// Passwords: added, removed, by hash, nopass and resetpass.
		c.Do("ACL", "SETUSER", "alice", "on", ">p1", ">p2", ">p1", "<p2")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "#"+strings.Repeat("ab", 32), "!"+strings.Repeat("ab", 32))
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "nopass")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "resetpass", "off", "skip-sanitize-payload")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "sanitize-payload", "ON")
		get("alice")
		// Keys and channels.
		c.Do("ACL", "SETUSER", "alice", "~k1", "%R~r:*", "%W~w:*", "%RW~rw", "%R~k1", "%W~", "%R")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "allkeys")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "resetkeys", "~a", "&c1", "&c2", "&c1")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "allchannels")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "resetchannels", "&x")
		get("alice")
		// Commands, categories, subcommands and first arguments.
		for _, rules := range [][]string{
			{"+@all"},
			{"allcommands", "-get"},
			{"+@all", "-@dangerous"},
			{"nocommands", "+@read"},
			{"-@all", "+@hash", "+get"},
			{"-@all", "+@string", "-append"},
			{"-@all", "+@connection", "+@transaction"},
			{"+@all", "-@pubsub", "+publish"},
			{"-@all", "+config|get"},
			{"-@all", "+client", "-client|kill"},
			{"-@all", "+select|0", "+select|1"},
			{"+@all", "-select", "+select|0"},
			{"-@all", "+GET", "+SeT"},
			{"reset"},
		} {
			c.Do(append([]string{"ACL", "SETUSER", "alice"}, rules...)...)
			get("alice")
		}
		// Selectors: one word or several, then cleared.
		c.Do("ACL", "SETUSER", "alice", "on", "(~sel:* +get)", "(", "%R~r", "+@read", ")", "(&ch* +publish)")
		get("alice")
		c.DoMasked(maskACLRules, "ACL", "LIST")
		c.Do("ACL", "SETUSER", "alice", "clearselectors")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "(~a", "+get)", "reset")
		get("alice")
		c.Do("ACL", "SETUSER", "alice", `("~a b)`)
		get("alice")
		c.Do("ACL", "SETUSER", "alice", "")
		get("alice")
		c.Do("ACL", "SETUSER", "bob", "on", "nopass", "~*", "&*", "+@all")
		c.DoMasked(maskACLRules, "ACL", "LIST")
		c.Do("ACL", "USERS")
	})
}

func TestACLSetUserErrors(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		for _, rules := range [][]string{
			{"+nosuchcommand"},
			{"-nosuchcommand"},
			{"+@nosuchcategory"},
			{"-@nosuch"},
			{"+"},
			{"+@"},
			{"bogus"},
			{"allkeys", "~k"},
			{"~*", "%R~k"},
			{"allchannels", "&c"},
			{"&*", "&c"},
			{"<neverset"},
			{"!" + strings.Repeat("ab", 32)},
			{"#short"},
			{"#" + strings.Repeat("AB", 32)},
			{"!" + strings.Repeat("g", 64)},
			{"+config|get|x"},
			{"+select|"},
			{"+nosuch|x"},
			{"+config|nosuch"},
			{"%"},
			{"%~k"},
			{"%RWR~k"},
			{"%X~k"},
			{"~a b"},
			{"&a b"},
			{"(~a +nosuch)"},
			{"(bogus)"},
			{"(~a", "+get"},
			{"on", "(", "+get"},
			{"on", ">pw", "+nosuch"},
		} {
			c.Error(append([]string{"ACL", "SETUSER", "eve"}, rules...)...)
		}
		// Nothing of a refused SETUSER applies.
		c.Do("ACL", "GETUSER", "eve")
		c.Do("ACL", "SETUSER", "eve", "on", ">pw")
		c.Error("ACL", "SETUSER", "eve", "off", "+nosuch")
		c.DoMasked(maskACLRules, "ACL", "GETUSER", "eve")
		c.Error("ACL", "SETUSER", "e ve")
		c.Error("ACL", "SETUSER", "e\x00ve")
		c.Error("ACL", "SETUSER")
		c.Error("ACL", "GETUSER")
		c.Error("ACL", "GETUSER", "a", "b")
		c.Error("ACL", "NOSUCH")
		c.Error("ACL")
	})
}

func TestACLDelUserUsersWhoAmI(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("ACL", "WHOAMI")
		c.Do("ACL", "USERS")
		c.Do("ACL", "SETUSER", "b1", "on", ">pw", "+@all", "~*")
		c.Do("ACL", "SETUSER", "a1")
		c.Do("ACL", "SETUSER", "c1")
		c.Do("ACL", "USERS")
		o := c.OtherClient()
		o.Do("AUTH", "b1", "pw")
		o.Do("ACL", "WHOAMI")
		c.Error("ACL", "DELUSER", "a1", "default")
		c.Do("ACL", "USERS")
		c.Do("ACL", "DELUSER", "a1", "nosuch", "a1", "b1")
		c.Do("ACL", "USERS")
		// b1's connection closed with the user.
		o.ExpectClosed()
		c.Error("ACL", "DELUSER")
		c.Error("ACL", "WHOAMI", "x")
		c.Error("ACL", "USERS", "x")
		c.Error("ACL", "LIST", "x")
	})
}

func TestACLCatAndGenPass(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("ACL", "CAT")
		// The categories whose commands cellserver all serves.
		for _, cat := range []string{"hash", "string", "pubsub", "connection", "transaction", "HASH",
			"set", "list", "sortedset", "bitmap", "keyspace", "scripting"} {
			c.DoSorted("ACL", "CAT", cat)
		}
		c.Error("ACL", "CAT", "nosuch")
		c.Error("ACL", "CAT", strings.Repeat("x", 200))
		c.Error("ACL", "CAT", "a", "b")
		c.DoLoosely("ACL", "GENPASS")
		for _, bits := range []string{"1", "4", "5", "7", "8", "9", "255", "4096"} {
			r, l := c.Replies("ACL", "GENPASS", bits)
			if len(r) != len(l) {
				t.Errorf("ACL GENPASS %s: redis-server %q, cellserver %q", bits, r, l)
			}
		}
		c.Error("ACL", "GENPASS", "0")
		c.Error("ACL", "GENPASS", "-1")
		c.Error("ACL", "GENPASS", "4097")
		c.Error("ACL", "GENPASS", "x")
		c.Error("ACL", "GENPASS", "1", "2")
		c.Do("ACL", "HELP")
	})
}

func TestACLAuthAndHello(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Error("AUTH", "x")
		c.Do("ACL", "SETUSER", "svc", "on", ">s3cret", "~svc:*", "+@all")
		c.Do("ACL", "SETUSER", "off1", "off", ">pw", "+@all")
		c.Do("ACL", "SETUSER", "free", "on", "nopass", "+@all")
		o := c.OtherClient()
		o.Error("AUTH", "svc", "wrong")
		o.Error("AUTH", "nosuch", "x")
		o.Error("AUTH", "off1", "pw")
		o.Do("AUTH", "free", "anything")
		o.Do("ACL", "WHOAMI")
		o.Do("AUTH", "svc", "s3cret")
		o.Do("ACL", "WHOAMI")
		o.Error("AUTH", "a", "b", "c")
		o.Error("HELLO", "2", "AUTH", "svc", "wrong")
		o.DoMasked(maskHello, "HELLO", "2", "AUTH", "svc", "s3cret")
		o.Do("ACL", "WHOAMI")
		o.Do("RESET")
		o.Do("ACL", "WHOAMI")
		c.DoMasked(maskACLLog, "ACL", "LOG")
		c.DoMasked(maskClientList, "CLIENT", "INFO")
	})
}

func TestACLRequirepassIsDefaultPassword(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{requirepass: "topsecret"}, func(t *testing.T, c *pair) {
		c.Error("GET", "k")
		c.Error("AUTH", "wrong")
		c.Do("AUTH", "topsecret")
		c.DoMasked(maskACLRules, "ACL", "GETUSER", "default")
		c.DoMasked(maskACLRules, "ACL", "LIST")
		c.Do("CONFIG", "SET", "requirepass", "other")
		c.DoMasked(maskACLRules, "ACL", "GETUSER", "default")
		o := c.OtherClient()
		o.Error("AUTH", "topsecret")
		o.Do("AUTH", "default", "other")
		c.Do("CONFIG", "SET", "requirepass", "")
		c.DoMasked(maskACLRules, "ACL", "LIST")
		c.Do("ACL", "SETUSER", "default", ">viaacl")
		c.Do("CONFIG", "GET", "requirepass")
		o.Do("AUTH", "viaacl")
	})
}

func TestACLPermissions(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("SET", "svcA:1", "v")
		c.Do("SET", "svcB:1", "v")
		c.Do("SET", "r:1", "v")
		c.Do("SET", "w:1", "v")
		c.Do("ACL", "SETUSER", "svcA", "on", ">pw", "~svcA:*", "%R~r:*", "%W~w:*", "&news.*",
			"-@all", "+@string", "+@read", "-strlen", "+del", "+publish", "+subscribe", "+psubscribe",
			"+unsubscribe", "+multi", "+exec", "+discard", "+eval", "+config|get", "+select|0", "+ping", "+copy", "+rename")
		u := c.OtherClient()
		u.Do("AUTH", "svcA", "pw")
		// Commands, categories and subcommands.
		u.Do("GET", "svcA:1")
		u.Error("STRLEN", "svcA:1")
		u.Error("HSET", "svcA:h", "f", "v")
		u.Error("FLUSHALL")
		u.Error("CONFIG", "SET", "maxmemory", "0")
		u.Error("ACL", "WHOAMI")
		u.Do("SELECT", "0")
		u.Error("SELECT", "1")
		u.Do("PING")
		// Keys: read and write patterns.
		u.Error("GET", "svcB:1")
		u.Do("GET", "r:1")
		u.Error("SET", "r:1", "x")
		u.Do("SET", "w:1", "x")
		u.Error("GET", "w:1")
		u.Do("EXISTS", "w:1")
		u.Do("DEL", "w:1")
		u.Error("DEL", "r:1")
		u.Do("MGET", "svcA:1", "r:1")
		u.Error("MGET", "svcA:1", "svcB:1")
		u.Error("MSET", "svcA:2", "x", "r:2", "y")
		u.Do("COPY", "r:1", "w:2")
		u.Error("COPY", "w:2", "r:3")
		u.Error("RENAME", "r:1", "svcA:9")
		u.Do("INCR", "svcA:n")
		// Channels: publish and subscribe match patterns, PSUBSCRIBE's
		// pattern must equal one.
		u.Do("PUBLISH", "news.x", "hi")
		u.Error("PUBLISH", "sports", "hi")
		c.DoMasked(maskACLLog, "ACL", "LOG")
		c.DoMasked(maskACLLog, "ACL", "LOG", "2")
		c.Do("ACL", "LOG", "0")
		c.Do("ACL", "LOG", "-3")
		c.Error("ACL", "LOG", "x")
		c.Error("ACL", "LOG", "1", "2")
		c.Do("ACL", "LOG", "RESET")
		c.Do("ACL", "LOG")
		// Another selector adds what the root one denies.
		c.Do("ACL", "SETUSER", "svcA", "(~svcB:* +hset +hget)")
		u.Do("HSET", "svcB:h", "f", "v")
		u.Error("HSET", "svcA:h", "f", "v")
		u.Error("GET", "svcB:1")
		c.DoMasked(maskACLLog, "ACL", "LOG")
	})
}

func TestACLPubSubChannels(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("ACL", "SETUSER", "sub", "on", "nopass", "&news.*", "+@all", "~*")
		u := c.OtherClient()
		u.Do("AUTH", "sub", "x")
		u.Error("SUBSCRIBE", "news.a", "sports")
		u.Error("PSUBSCRIBE", "news.a*")
		u.Error("SSUBSCRIBE", "sports")
		u.Error("SPUBLISH", "sports", "x")
		u.Do("SPUBLISH", "news.b", "x")
		u.Do("PSUBSCRIBE", "news.*")
		u.Do("UNSUBSCRIBE", "sports")
		c.DoMasked(maskACLLog, "ACL", "LOG")
	})
}

func TestACLRevokedChannelsCloseSubscribers(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("ACL", "SETUSER", "sub", "on", "nopass", "&news.*", "&sport", "+@all", "~*")
		u := c.OtherClient()
		u.Do("AUTH", "sub", "x")
		u.Do("SUBSCRIBE", "sport")
		v := c.OtherClient()
		v.Do("AUTH", "sub", "x")
		v.Do("PSUBSCRIBE", "news.*")
		// More channels: nobody is closed.
		c.Do("ACL", "SETUSER", "sub", "&more")
		c.Do("PUBSUB", "NUMSUB", "sport")
		// sport goes: its subscriber is closed, the pattern's stays.
		c.Do("ACL", "SETUSER", "sub", "resetchannels", "&news.*")
		u.ExpectClosed()
		c.Do("PUBLISH", "news.x", "hi")
		c.DoMasked(maskClientList, "CLIENT", "INFO")
	})
}

func TestACLMulti(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("ACL", "SETUSER", "tx", "on", "nopass", "~a*", "&ch*", "+@all", "-flushall")
		u := c.OtherClient()
		u.Do("AUTH", "tx", "x")
		// Refused while queueing: the transaction is aborted.
		u.Do("MULTI")
		u.Do("SET", "a1", "1")
		u.Error("FLUSHALL")
		u.Error("GET", "b1")
		u.Error("EXEC")
		// Refused at EXEC: the rules changed after queueing.
		u.Do("MULTI")
		u.Do("GET", "a1")
		u.Do("SET", "a2", "1")
		u.Do("PUBLISH", "ch1", "x")
		u.Do("PING")
		c.Do("ACL", "SETUSER", "tx", "-get", "resetkeys", "~x*", "resetchannels")
		u.Do("EXEC")
		c.DoMasked(maskACLLog, "ACL", "LOG")
		// EXEC itself refused.
		c.Do("ACL", "SETUSER", "tx", "+@all", "~*", "&*", "-exec")
		u.Do("MULTI")
		u.Do("SET", "a3", "1")
		u.Error("EXEC")
		u.Do("GET", "a3")
	})
}

func TestACLScripts(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("ACL", "SETUSER", "lua", "on", "nopass", "~a*", "&ch*", "-@all", "+eval", "+get", "+set", "+publish")
		u := c.OtherClient()
		u.Do("AUTH", "lua", "x")
		u.Do("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "a1")
		u.Error("EVAL", "return redis.call('get', 'b1')", "0")
		u.Error("EVAL", "return redis.call('incr', 'a1')", "0")
		u.Error("EVAL", "return redis.call('publish', 'other', 'x')", "0")
		u.Do("EVAL", "return redis.pcall('incr', 'a1')", "0")
		u.Do("EVAL", "return redis.pcall('get', 'b')", "0")
		u.Do("EVAL", "return redis.call('publish', 'ch1', 'x')", "0")
		u.Error("EVALSHA", "0000000000000000000000000000000000000000", "0")
		c.DoMasked(maskACLLog, "ACL", "LOG")
	})
}

func TestACLDryRun(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("ACL", "SETUSER", "dry", "on", "nopass", "~a*", "%R~r*", "&ch*", "-@all", "+get", "+set", "+publish", "+config|get")
		c.Do("ACL", "DRYRUN", "dry", "GET", "a1")
		c.Do("ACL", "DRYRUN", "dry", "get", "b1")
		c.Do("ACL", "DRYRUN", "dry", "SET", "r1", "v")
		c.Do("ACL", "DRYRUN", "dry", "INCR", "a1")
		c.Do("ACL", "DRYRUN", "dry", "PUBLISH", "other", "x")
		c.Do("ACL", "DRYRUN", "dry", "CONFIG", "GET", "x")
		c.Do("ACL", "DRYRUN", "dry", "CONFIG", "SET", "x", "y")
		c.Error("ACL", "DRYRUN", "nosuch", "GET", "a")
		c.Error("ACL", "DRYRUN", "dry", "NOSUCH", "a")
		c.Error("ACL", "DRYRUN", "dry", "CONFIG", "NOSUCH")
		c.Error("ACL", "DRYRUN", "dry", "GET")
		c.Error("ACL", "DRYRUN", "dry")
		// DRYRUN logs nothing.
		c.Do("ACL", "LOG")
	})
}

func TestACLClientListAndKill(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("ACL", "SETUSER", "k", "on", "nopass", "+@all", "~*")
		o := c.OtherClient()
		o.Do("AUTH", "k", "x")
		o.DoMasked(maskClientList, "CLIENT", "INFO")
		c.Error("CLIENT", "KILL", "USER", "nosuch")
		c.Do("CLIENT", "KILL", "USER", "k")
		o.ExpectClosed()
		c.Do("CLIENT", "KILL", "USER", "k")
	})
}

func TestACLFileSaveAndLoad(t *testing.T) {
	initial := "user default on nopass ~* &* +@all\nuser svc on #" + strings.Repeat("ab", 32) + " ~svc:* resetchannels -@all +get\n"
	forBothProtocolsOwn(t, serverOptions{aclfile: &initial}, func(t *testing.T, c *pair) {
		c.DoMasked(maskACLRules, "ACL", "LIST")
		c.Do("CONFIG", "GET", "aclfile")
		c.Do("ACL", "SETUSER", "new", "on", ">pw", "~n:*", "+set")
		c.Do("ACL", "SAVE")
		for _, s := range []*process{c.srv.redis, c.srv.cell} {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(s.LogPath), "users.acl"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "user new on #") {
				t.Errorf("%s: the saved file lacks the new user:\n%s", s.name, b)
			}
		}
		c.Do("ACL", "DELUSER", "new")
		c.Do("ACL", "LOAD")
		c.Do("ACL", "USERS")
		// A bad file changes nothing.
		for _, bad := range []string{
			"user x on +nosuch\n",
			"notuser x\n",
			"user\n",
			"user a on\nuser a off\n",
			"user c on %X~a +nosuch\n",
			"user e on #zz\n",
			"user f on\nx\nuser f\n",
			" user  g  on  \n",
			"user c on >pw &a allchannels &b\n",
		} {
			for _, s := range []*process{c.srv.redis, c.srv.cell} {
				os.WriteFile(filepath.Join(filepath.Dir(s.LogPath), "users.acl"), []byte(bad), 0o644)
			}
			c.Error("ACL", "LOAD")
		}
		c.Do("ACL", "USERS")
		for _, s := range []*process{c.srv.redis, c.srv.cell} {
			os.Remove(filepath.Join(filepath.Dir(s.LogPath), "users.acl"))
		}
		c.Error("ACL", "LOAD")
		c.Error("CONFIG", "SET", "aclfile", "x")
	})
}

func TestACLWithoutFile(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Error("ACL", "SAVE")
		c.Error("ACL", "LOAD")
		c.Do("CONFIG", "GET", "aclfile")
		c.Do("CONFIG", "GET", "acl-pubsub-default")
		c.Do("CONFIG", "SET", "acl-pubsub-default", "allchannels")
		c.Do("ACL", "SETUSER", "p")
		c.Do("ACL", "GETUSER", "p")
		c.Do("ACL", "SETUSER", "p", "reset")
		c.Do("ACL", "GETUSER", "p")
		c.Do("CONFIG", "SET", "acllog-max-len", "1")
		c.Do("CONFIG", "GET", "acllog-max-len")
	})
}

func TestACLUserLinesInConfig(t *testing.T) {
	opt := serverOptions{args: []string{"--user", "svc", "on", ">pw", "~svc:*", "+@all", "--user", "default", "on", "nopass", "~*", "+@all"}}
	forBothProtocolsOwn(t, opt, func(t *testing.T, c *pair) {
		c.DoMasked(maskACLRules, "ACL", "LIST")
		o := c.OtherClient()
		o.Do("AUTH", "svc", "pw")
		o.Error("GET", "other")
		o.Do("GET", "svc:1")
	})
}

// TestACLUserLinesInConfigFile: user lines in the configuration file make
// the users, as on the command line. With an aclfile as well, a rule that
// names no command, a bad rule or a user declared twice, neither server
// starts: both exit with status 1 and say why.
func TestACLUserLinesInConfigFile(t *testing.T) {
	conf := "user svc on >pw ~svc:* &jobs -@all +@read +set\nuser default on nopass ~* &* +@all\n"
	forBothProtocolsOwn(t, serverOptions{conf: conf}, func(t *testing.T, c *pair) {
		c.DoMasked(maskACLRules, "ACL", "LIST")
		c.DoMasked(maskACLRules, "ACL", "GETUSER", "svc")
		o := c.OtherClient()
		o.Error("AUTH", "svc", "nope")
		o.Do("AUTH", "svc", "pw")
		o.Do("SET", "svc:1", "v")
		o.Error("SET", "other", "v")
		o.Error("DEL", "svc:1")
		o.Do("GET", "svc:1")
		o.Error("PUBLISH", "jobs", "x")
		c.DoMasked(maskACLLog, "ACL", "LOG")
	})
	dir := t.TempDir()
	aclfile := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(aclfile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	redis := requirePeer(t, "redis-server")
	cellserverBinary(t)
	for _, tc := range []struct{ name, conf, says string }{
		{"aclfile too", "user svc on >pw +get\naclfile " + aclfile + "\n", "users defined in redis.conf and at the same setting an ACL file"},
		{"unknown command", "user svc on >pw +nosuch\n", "Unknown command or category name in ACL"},
		{"bad rule", "user svc on bogus\n", "Error in user declaration"},
		{"user twice", "user a on\nuser a off\n", "Duplicate user found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.conf")
			if err := os.WriteFile(path, []byte(tc.conf), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, bin := range []string{redis, harness.binary} {
				if log := refusedStart(t, bin, path); !strings.Contains(log, tc.says) {
					t.Errorf("%s: the output lacks %q:\n%s", filepath.Base(bin), tc.says, log)
				}
			}
		})
	}
}

// refusedStart starts bin with the configuration file conf and requires
// it to exit with status 1 without serving; it returns the output.
func refusedStart(t *testing.T, bin, conf string) string {
	t.Helper()
	return refusedStartIn(t, bin, t.TempDir(), conf)
}

// refusedStartIn starts bin on dir (its --dir and working directory)
// with args first and requires it to exit with status 1 without
// serving; it returns the output.
func refusedStartIn(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	port, err := serverproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir)
	sp, err := serverproc.Start(bin, args, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sp.Exited():
	case <-time.After(startTimeout):
		sp.Stop()
		t.Fatalf("%s started with %q", filepath.Base(bin), args)
	}
	var ee *exec.ExitError
	if !errors.As(sp.Err(), &ee) || ee.ExitCode() != 1 {
		t.Errorf("%s: exit %v, want status 1", filepath.Base(bin), sp.Err())
	}
	return sp.LogTail(20)
}

// TestACLSort: SORT's BY (with a '*') and GET patterns read keys no key
// pattern names, so Redis allows them only to a user with a selector
// that allows the command and reads every key (allkeys, "~*", "%R~*");
// the others get an error, in a transaction and a script too.
func TestACLSort(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "rw:a", "2", "1", "3")
		c.Do("MSET", "w:1", "30", "w:2", "20", "w:3", "10", "r:1", "one")
		for _, rules := range [][]string{
			{"%R~r:*", "%W~w:*", "~rw:*", "+@all"},
			{"~*", "+@all"},
			{"allkeys", "+@all"},
			{"%R~*", "+@all"},
			{"%W~*", "~rw:*", "+@all"},
			{"~rw:*", "+@all", "(%R~* +sort)"},
			{"~rw:*", "+@all", "(%R~* +get)"},
			{"~rw:*", "+@all", "(~* -sort)"},
		} {
			c.Do(append([]string{"ACL", "SETUSER", "u", "reset", "on", "nopass"}, rules...)...)
			u := c.OtherClient()
			u.Do("AUTH", "u", "x")
			u.Do("SORT", "rw:a", "BY", "nosort")
			u.Do("SORT", "rw:a", "BY", "constant", "LIMIT", "0", "2")
			u.Do("SORT", "rw:a", "BY", "w:*")
			u.Do("SORT", "rw:a", "GET", "#")
			u.Do("SORT", "rw:a", "GET", "r:*", "BY", "w:*")
			u.Do("SORT", "rw:a", "BY", "w:*", "FOO") // the first bad option answers
			u.Do("SORT_RO", "rw:a", "GET", "r:*")
			u.Do("SORT", "rw:a", "BY", "w:*", "STORE", "rw:d")
			u.Do("LRANGE", "rw:d", "0", "-1")
			u.Do("EVAL", "return redis.pcall('SORT', KEYS[1], 'BY', 'w:*')", "1", "rw:a")
			u.Do("MULTI")
			u.Do("SORT", "rw:a", "GET", "#")
			u.Do("EXEC")
		}
		c.DoMasked(maskACLLog, "ACL", "LOG")
	})
}

// TestACLFileRelativeToDir: a relative aclfile is in dir, not in the
// directory the server was started in (Redis changes to dir as it reads
// its configuration): the start loads it from there, ACL SAVE writes it
// there and ACL LOAD reads it back.
func TestACLFileRelativeToDir(t *testing.T) {
	redis := requirePeer(t, "redis-server")
	cellserverBinary(t)
	users := "user default on nopass ~* &* +@all\nuser svc on nopass ~svc:* -@all +get\n"
	opt := serverOptions{args: []string{"--aclfile", "users.acl"}}
	var procs [2]*process
	var dirs [2]string
	for i, s := range []struct {
		name, bin string
		args      func(int, string, serverOptions) []string
	}{{"redis-server", redis, redisArgs}, {"cellserver", harness.binary, cellserverArgs}} {
		dirs[i] = t.TempDir()
		if err := os.WriteFile(filepath.Join(dirs[i], "users.acl"), []byte(users), 0o644); err != nil {
			t.Fatal(err)
		}
		port, err := serverproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		p, err := launch(s.name, s.bin, s.args(port, dirs[i], opt), t.TempDir(), port)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		procs[i] = p
	}
	c := newPairOn(t, &servers{redis: procs[0], cell: procs[1]})
	c.DoMasked(maskACLRules, "ACL", "LIST")
	c.Do("ACL", "SETUSER", "new", "on", "nopass", "~n:*", "+set")
	c.Do("ACL", "SAVE")
	for i, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "users.acl"))
		if err != nil || !strings.Contains(string(b), "user new on nopass") {
			t.Errorf("%s: users.acl in dir after ACL SAVE: %v\n%s", procs[i].name, err, b)
		}
	}
	c.Do("ACL", "DELUSER", "new")
	c.Do("ACL", "LOAD")
	c.Do("ACL", "USERS")
}
