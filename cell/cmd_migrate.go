package cell

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// MIGRATE moves keys to another server atomically, as Redis's does: the
// keys' shards stay locked while their values are sent with RESTORE-ASKING
// and acknowledged, and only then are the keys deleted here. No client can
// change a key between its copy and its deletion, so a slot can be moved
// while clients keep writing to it (cellserver migrate and redis-cli
// --cluster reshard both move keys this way). Clients of other shards are
// not held up; clients of these shards wait for at most the timeout.
//
// The payloads are DUMP's (cmd_dump.go), Redis's own, so the target may be
// a cellserver or a redis-server. The TTL is sent relative, as Redis does,
// so the two clocks need not agree on it.

func init() {
	register(
		&Command{Name: "migrate", Arity: -6, Flags: FlagWrite | FlagMovableKeys, FirstKey: 3, LastKey: 3, Keys: migrateKeys, Handler: migrate,
			ACL: ACLKeyspace | ACLDangerous, Tips: []string{"nondeterministic_output"},
			KeySpecs: []KeySpec{
				{Flags: KeyRW | KeyAccess | KeyDelete, BeginIndex: 3, LastKey: 0, KeyStep: 1},
				{Flags: KeyRW | KeyAccess | KeyDelete | KeyIncomplete, Keyword: "KEYS", StartFrom: -2, LastKey: -1, KeyStep: 1},
			},
			Doc: &CommandDoc{"Atomically transfer a key from a Redis instance to another one.", "2.6.0", "generic", "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed."}},
		&Command{Name: "restore-asking", Arity: -4, Flags: FlagWrite | FlagDenyOOM | FlagAsking, FirstKey: 1, LastKey: 1, Handler: restore,
			ACL: ACLKeyspace | ACLDangerous, KeySpecs: restoreKeySpecs,
			Doc: &CommandDoc{"An internal command for migrating keys in a cluster", "3.0.0", "server", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N))."}},
	)
}

// migrateOpts is MIGRATE's arguments after the fixed five.
type migrateOpts struct {
	copy, replace  bool
	user, password string
	auth           bool
	firstKey       int // index of the first key in args; 3 without KEYS
	err            string
}

// parseMigrate reads the options as Redis's migrateCommand does.
func parseMigrate(args [][]byte) migrateOpts {
	o := migrateOpts{firstKey: 3}
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch a := args[j]; {
		case optIs(a, "copy"):
			o.copy = true
		case optIs(a, "replace"):
			o.replace = true
		case optIs(a, "auth"):
			if more < 1 {
				o.err = ErrSyntax
				return o
			}
			j++
			o.auth, o.password = true, string(args[j])
		case optIs(a, "auth2"):
			if more < 2 {
				o.err = ErrSyntax
				return o
			}
			o.auth, o.user, o.password = true, string(args[j+1]), string(args[j+2])
			j += 2
		case optIs(a, "keys"):
			if len(args[3]) != 0 {
				o.err = ErrMigrateKeysArg
				return o
			}
			o.firstKey = j + 1
			return o
		default:
			o.err = ErrSyntax
			return o
		}
	}
	return o
}

// migrateKeys is MIGRATE's key positions: argv[3], or everything after KEYS.
func migrateKeys(args [][]byte) []int {
	o := parseMigrate(args)
	if o.err != "" {
		return nil
	}
	if o.firstKey == 3 {
		if len(args[3]) == 0 {
			return nil
		}
		return []int{3}
	}
	out := make([]int, 0, len(args)-o.firstKey)
	for i := o.firstKey; i < len(args); i++ {
		out = append(out, i)
	}
	return out
}

func migrate(x *Ctx) {
	o := parseMigrate(x.Args)
	if o.err != "" {
		x.Error(o.err)
		return
	}
	timeout, ok := resp.ParseInt(x.Args[5])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	db, ok := resp.ParseInt(x.Args[4])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if timeout <= 0 {
		timeout = 1000
	}
	type item struct {
		key     []byte
		payload []byte
		ttl     int64
	}
	var items []item
	keys := x.Args[3:4]
	if o.firstKey != 3 {
		keys = x.Args[o.firstKey:]
	}
	for _, k := range keys {
		e := x.Lookup(k)
		if e == nil {
			continue
		}
		p, ok := encodeDump(e)
		if !ok {
			x.Error(ErrDumpType)
			return
		}
		ttl := int64(0)
		if e.Exp != 0 {
			ttl = max(e.Exp-x.Now(), 1)
		}
		items = append(items, item{k, p, ttl})
	}
	if len(items) == 0 {
		x.W.Status("NOKEY")
		return
	}
	addr := net.JoinHostPort(string(x.Args[1]), string(x.Args[2]))
	d := time.Duration(timeout) * time.Millisecond
	nc, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		// Redis connects without blocking and waits for the socket to be
		// writable: only a name it cannot resolve fails the connect; a
		// refusal or a timeout fails the write that follows.
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			x.Error(ErrMigrateConnect)
		} else {
			x.Error(ErrMigrateWrite)
		}
		return
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(d))
	// One pipeline: [AUTH], [SELECT], a RESTORE-ASKING per key.
	var req []byte
	cmd := func(args ...[]byte) {
		req = append(req, '*')
		req = strconv.AppendInt(req, int64(len(args)), 10)
		req = append(req, '\r', '\n')
		for _, a := range args {
			req = append(req, '$')
			req = strconv.AppendInt(req, int64(len(a)), 10)
			req = append(req, '\r', '\n')
			req = append(req, a...)
			req = append(req, '\r', '\n')
		}
	}
	pre := 0
	if o.auth {
		if o.user != "" {
			cmd([]byte("AUTH"), []byte(o.user), []byte(o.password))
		} else {
			cmd([]byte("AUTH"), []byte(o.password))
		}
		pre++
	}
	if db != 0 {
		cmd([]byte("SELECT"), x.Args[4])
		pre++
	}
	for _, it := range items {
		args := [][]byte{[]byte("RESTORE-ASKING"), it.key, strconv.AppendInt(nil, it.ttl, 10), it.payload}
		if o.replace {
			args = append(args, []byte("REPLACE"))
		}
		cmd(args...)
	}
	if _, err := nc.Write(req); err != nil {
		x.Error(ErrMigrateWrite)
		return
	}
	r := bufio.NewReader(nc)
	var firstErr string
	for i := 0; i < pre+len(items); i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			x.Error(ErrMigrateRead)
			return
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "-") {
			if firstErr == "" {
				firstErr = line[1:]
			}
			if i < pre {
				break // AUTH or SELECT failed: nothing was restored
			}
			continue
		}
		if i >= pre && !o.copy {
			// Restored there: gone from here, as one write.
			x.Remove(items[i-pre].key)
		}
	}
	if firstErr != "" {
		x.Error(errMigrateTarget(firstErr))
		return
	}
	x.W.OK()
}
