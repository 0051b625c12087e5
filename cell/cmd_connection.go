package cell

import (
	"strings"

	"github.com/cellserver/cellserver/resp"
)

func init() {
	register(
		&Command{Name: "ping", Arity: -1, Flags: FlagFast, Handler: ping,
			ACL: ACLConnection, Tips: tipsAllShardsSucceeded,
			Doc: &CommandDoc{"Ping the server", "1.0.0", "connection", "O(1)"}},
		&Command{Name: "echo", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, Handler: echo,
			ACL: ACLConnection, Doc: &CommandDoc{"Echo the given string", "1.0.0", "connection", "O(1)"}},
		&Command{Name: "quit", Arity: -1, Flags: FlagAllowBusy | FlagNoAuth | FlagNoScript | FlagLoading | FlagStale | FlagFast | flagTxn, Handler: quit,
			ACL: ACLConnection, Doc: &CommandDoc{"Close the connection", "1.0.0", "connection", "O(1)"}},
		&Command{Name: "reset", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy | flagTxn, Handler: reset,
			ACL: ACLConnection, Doc: &CommandDoc{"Reset the connection", "6.2.0", "connection", "O(1)"}},
		&Command{Name: "select", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, Handler: selectDB,
			ACL: ACLConnection, Doc: &CommandDoc{"Change the selected database for the current connection", "1.0.0", "connection", "O(1)"}},
		&Command{Name: "auth", Arity: -2, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagSentinel | FlagAllowBusy, Handler: auth,
			ACL: ACLConnection, Doc: &CommandDoc{"Authenticate to the server", "1.0.0", "connection", "O(N) where N is the number of passwords defined for the user"}},
		&Command{Name: "hello", Arity: -1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagSentinel | FlagAllowBusy, Handler: hello,
			ACL: ACLConnection, Doc: &CommandDoc{"Handshake with Redis", "6.0.0", "connection", "O(1)"}},
	)
}

func ping(x *Ctx) {
	if len(x.Args) <= 2 && x.W == x.cl.w && x.W.Proto() == 2 && x.cl.subscribed() {
		// Subscribed in RESP2: the reply is shaped as a message.
		x.W.Array(2)
		x.W.BulkString("pong")
		if len(x.Args) == 2 {
			x.W.Bulk(x.Args[1])
		} else {
			x.W.BulkString("")
		}
		return
	}
	switch len(x.Args) {
	case 1:
		x.W.Status("PONG")
	case 2:
		x.W.Bulk(x.Args[1])
	default:
		x.Error(errArity("ping"))
	}
}

func echo(x *Ctx) { x.W.Bulk(x.Args[1]) }

func quit(x *Ctx) {
	x.W.OK()
	x.cl.closeAfter = true
}

// reset returns the connection to its state right after connecting.
func reset(x *Ctx) {
	c := x.cl
	c.stopMonitor()
	c.dropSubs() // pubsub.go: no replies, the mode ends after RESET's
	c.multi = nil
	c.unwatchAll()
	c.db = 0
	c.readonly, c.asking = false, false
	c.w.SetProto(2)
	c.setName("")
	c.authed = x.srv.startsAuthed()
	c.setUser(x.srv.defaultUser())
	// CLIENT REPLY goes back to ON, and RESET's own reply is sent; CLIENT
	// NO-EVICT survives, as in Redis.
	c.reply, c.replyKeep = replyOn, true
	x.W.Status("RESET")
}

func selectDB(x *Ctx) {
	n, ok := resp.ParseInt(x.Args[1])
	if !ok || n != int64(int32(n)) {
		x.Error(ErrNotInteger)
		return
	}
	if x.srv.clusterOn && n != 0 {
		x.Error(ErrSelectCluster)
		return
	}
	if n < 0 || n >= int64(x.srv.ks.DBs()) {
		x.Error(ErrDBIndex)
		return
	}
	x.cl.db = int(n)
	x.SetDB(int(n))
	x.W.OK()
}

// parseDBIndex is SELECT's argument check, for EXEC's lock planning.
func parseDBIndex(s *Server, b []byte) (int, bool) {
	n, ok := resp.ParseInt(b)
	if !ok || n < 0 || n >= int64(s.ks.DBs()) {
		return 0, false
	}
	return int(n), true
}

func auth(x *Ctx) {
	if len(x.Args) > 3 {
		x.Error(ErrSyntax)
		return
	}
	if len(x.Args) == 2 && x.srv.defaultUser().rules.Load().nopass {
		x.Error(ErrNoPassword)
		return
	}
	user, pass := []byte("default"), x.Args[len(x.Args)-1]
	if len(x.Args) == 3 {
		user = x.Args[1]
	}
	if !x.cl.login(x, user, pass) {
		x.Error(ErrWrongPass)
		return
	}
	x.W.OK()
}

// login authenticates the connection as user (AUTH, HELLO AUTH). A
// failure is logged in the ACL log, as Redis's ACLAuthenticateUser.
func (c *Client) login(x *Ctx, user, pass []byte) bool {
	u := c.srv.authenticate(user, pass) // acl_check.go
	if u == nil {
		ctx := aclCtxToplevel
		if c.multi != nil || x != &c.ctx {
			ctx = aclCtxMulti // run by EXEC
		}
		c.aclLogDenial(x.cmd, aclDeniedAuth, ctx, string(x.Args[0]), string(user))
		return false
	}
	c.authed = true
	c.setUser(u)
	return true
}

func hello(x *Ctx) {
	c := x.cl
	proto := int64(c.w.Proto())
	if len(x.Args) >= 2 {
		v, ok := resp.ParseInt(x.Args[1])
		if !ok {
			x.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			x.Error(ErrNoProto)
			return
		}
		proto = v
	}
	// As in Redis 7.0, SETNAME takes effect as it is read: a later bad
	// option, password or missing AUTH fails HELLO with the name set.
	var user, pass []byte
	for j := 2; j < len(x.Args); j++ {
		more := len(x.Args) - 1 - j
		opt := x.Args[j]
		switch {
		case strings.EqualFold(string(opt), "auth") && more >= 2:
			user, pass = x.Args[j+1], x.Args[j+2]
			j += 2
		case strings.EqualFold(string(opt), "setname") && more >= 1:
			if !validClientName(x.Args[j+1]) {
				x.Error(ErrClientName)
				return
			}
			c.setName(string(x.Args[j+1]))
			j++
		default:
			x.Error("ERR Syntax error in HELLO option '" + cstring(opt) + "'")
			return
		}
	}
	if user != nil && !c.login(x, user, pass) {
		x.Error(ErrWrongPass)
		return
	}
	if !c.authed {
		x.Error(ErrHelloNoAuth)
		return
	}
	c.w.SetProto(int(proto))
	w := x.W
	w.Map(7)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(x.srv.cfg.Version)
	w.BulkString("proto")
	w.Int(proto)
	w.BulkString("id")
	w.Int(c.id)
	w.BulkString("mode")
	w.BulkString(x.srv.redisMode())
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("modules")
	w.Array(0)
}

// validClientName allows only printable ASCII without spaces, as Redis.
func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func (c *Client) setName(n string) {
	c.mu.Lock()
	c.name = n
	c.mu.Unlock()
}
