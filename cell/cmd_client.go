package cell

import (
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// CLIENT and its subcommands, as in Redis 7.0 (which has no SETINFO: it
// is answered as an unknown subcommand, and clients that send it ignore the
// error). We have no replicas, blocking commands or client-side caching, so
// the subcommands about those answer as Redis does when there are none of
// them. Subscribed clients are of type pubsub (clientType).

func init() {
	conn := FlagNoScript | FlagLoading | FlagStale
	admin := FlagAdmin | conn
	doc := func(summary, since, complexity string) *CommandDoc {
		return &CommandDoc{summary, since, "connection", complexity}
	}
	c := func(name string, arity int, flags Flag, h Handler, d *CommandDoc, tips ...string) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, Handler: h, ACL: ACLConnection, Doc: d, Tips: tips}
	}
	register(
		&Command{Name: "client", Arity: -2, Handler: func(*Ctx) {},
			Doc: doc("A container for client connection commands", "2.4.0", "Depends on subcommand.")},
		c("client|caching", 3, conn, clientCaching, doc("Instruct the server about tracking or not keys in the next request", "6.0.0", "O(1)")),
		c("client|getname", 2, conn, clientGetName, doc("Get the current connection name", "2.6.9", "O(1)")),
		c("client|getredir", 2, conn, clientGetRedir, doc("Get tracking notifications redirection client ID if any", "6.0.0", "O(1)")),
		c("client|help", 2, FlagLoading|FlagStale, clientHelp, doc("Show helpful text about the different subcommands", "5.0.0", "O(1)")),
		c("client|id", 2, conn, clientID, doc("Returns the client ID for the current connection", "5.0.0", "O(1)")),
		c("client|info", 2, conn, clientInfo, doc("Returns information about the current client connection.", "6.2.0", "O(1)"), "nondeterministic_output"),
		c("client|kill", -3, admin, clientKill, doc("Kill the connection of a client", "2.4.0", "O(N) where N is the number of client connections")),
		c("client|list", -2, admin, clientList, doc("Get the list of client connections", "2.4.0", "O(N) where N is the number of client connections"), "nondeterministic_output"),
		c("client|no-evict", 3, admin, clientNoEvict, doc("Set client eviction mode for the current connection", "7.0.0", "O(1)")),
		c("client|pause", -3, admin, clientPause, doc("Stop processing commands from clients for some time", "2.9.50", "O(1)")),
		c("client|reply", 3, conn, clientReply, doc("Instruct the server whether to reply to commands", "3.2.0", "O(1)")),
		c("client|setname", 3, conn, clientSetName, doc("Set the current connection name", "2.6.9", "O(1)")),
		c("client|tracking", -3, conn, clientTracking, doc("Enable or disable server assisted client side caching support", "6.0.0", "O(1). Some options may introduce additional complexity.")),
		c("client|trackinginfo", 2, conn, clientTrackingInfo, doc("Return information about server assisted client side caching for the current connection", "6.2.0", "O(1)")),
		c("client|unblock", -3, admin, clientUnblock, doc("Unblock a client blocked in a blocking command from a different connection", "5.0.0", "O(log N) where N is the number of client connections")),
		c("client|unpause", 2, admin, clientUnpause, doc("Resume processing of clients that were paused", "6.2.0", "O(N) Where N is the number of paused clients")),
	)
}

// clientShared is the part of a client's state that CLIENT LIST and CLIENT
// KILL read from other connections. The owning goroutine publishes it after
// every command (publish), so readers never touch its plain fields.
type clientShared struct {
	db    atomic.Int32
	multi atomic.Int32 // queued commands, -1 outside MULTI
	proto atomic.Int32
	flags atomic.Uint32 // clientFlag bits
	// Channels, patterns and shard channels subscribed (pubsub.go
	// settleSubs).
	sub, psub, ssub atomic.Int32
	user            atomic.Pointer[aclUser] // CLIENT LIST user=, CLIENT KILL USER
}

type clientFlag uint32

const (
	cflagNoEvict clientFlag = 1 << iota
	cflagMonitor            // MONITOR mode (monitor.go)
	cflagPubSub             // subscribed to a channel or pattern (pubsub.go)
	cflagBlocked            // blocked in a blocking pop (blocking.go)
)

// publish copies the state CLIENT LIST shows where other connections can
// read it. It runs after every command and the values rarely change, so
// each is stored only when it differs: this goroutine is the only writer,
// so the result is the same, and a load costs a plain read where an atomic
// store is a locked XCHG on amd64.
func (c *Client) publish() {
	storeIfChanged(&c.shared.db, int32(c.db))
	m := int32(-1)
	if c.multi != nil {
		m = int32(len(c.multi.cmds))
	}
	storeIfChanged(&c.shared.multi, m)
	storeIfChanged(&c.shared.proto, int32(c.w.Proto()))
}

// storeIfChanged stores v in a, unless a already holds it. Only for
// values with a single writer (the caller), where the check cannot race.
func storeIfChanged(a *atomic.Int32, v int32) {
	if a.Load() != v {
		a.Store(v)
	}
}

// replyMode is CLIENT REPLY's state.
type replyMode uint8

const (
	replyOn replyMode = iota
	replyOff
	replySkipNext // SKIP: the next command's reply is dropped
	replySkipThis // the command whose reply is being dropped
)

// startReply is called before each command: it decides whether the reply
// about to be written is kept. It returns the writer position to cut back
// to, or -1 to keep the reply.
func (c *Client) startReply() int {
	switch c.reply {
	case replyOff:
		return c.w.Len()
	case replySkipNext:
		c.reply = replySkipThis
		return c.w.Len()
	case replySkipThis:
		c.reply = replyOn
	}
	return -1
}

// endReply drops the command's reply when CLIENT REPLY said so.
func (c *Client) endReply(mark int) {
	if c.replyKeep {
		c.replyKeep = false
		return
	}
	if c.reply == replySkipThis {
		c.reply = replyOn
	}
	if mark >= 0 && mark <= c.w.Len() {
		c.w.Truncate(mark)
	}
}

func clientID(x *Ctx) { x.W.Int(x.cl.id) }

func clientGetName(x *Ctx) {
	if n := x.cl.Name(); n != "" {
		x.W.BulkString(n)
		return
	}
	x.W.Null()
}

func clientSetName(x *Ctx) {
	if !validClientName(x.Args[2]) {
		x.Error(ErrClientName)
		return
	}
	x.cl.setName(string(x.Args[2]))
	x.W.OK()
}

// clientInfo is CLIENT INFO: this connection's CLIENT LIST line.
func clientInfo(x *Ctx) {
	var b []byte
	b = x.cl.appendInfo(b, x)
	x.W.Verbatim(string(b))
}

// clientList is CLIENT LIST [TYPE type] [ID id ...].
func clientList(x *Ctx) {
	var ids map[int64]bool
	typ := "" // every type
	switch {
	case len(x.Args) == 4 && strings.EqualFold(string(x.Args[2]), "type"):
		t, ok := clientType(x.Args[3])
		if !ok {
			x.Error(errUnknownClientType(cstring(x.Args[3])))
			return
		}
		typ = t
	case len(x.Args) > 3 && strings.EqualFold(string(x.Args[2]), "id"):
		ids = map[int64]bool{}
		for _, a := range x.Args[3:] {
			id, ok := resp.ParseInt(a)
			if !ok {
				x.Error(ErrInvalidClientID)
				return
			}
			ids[id] = true
		}
	case len(x.Args) != 2:
		x.Error(ErrSyntax)
		return
	}
	var b []byte
	for _, c := range x.srv.clientsByID() {
		if (ids == nil && (typ == "" || c.clientType() == typ)) || ids[c.id] {
			b = c.appendInfo(b, x)
		}
	}
	x.W.Verbatim(string(b))
}

// clientType is c's class for CLIENT LIST/KILL TYPE, as Redis's
// getClientType: a replica's link to its master, a replica's connection
// on its master, "pubsub" while subscribed, else "normal" (a monitor
// included).
func (c *Client) clientType() string {
	if c.repl != nil && c.repl.master {
		return "master"
	}
	if c.repl != nil && c.repl.rep != nil {
		return "replica"
	}
	if clientFlag(c.shared.flags.Load())&cflagPubSub != 0 {
		return "pubsub"
	}
	return "normal"
}

// clientType maps a CLIENT LIST/KILL type name to ours.
func clientType(b []byte) (string, bool) {
	switch strings.ToLower(string(b)) {
	case "normal":
		return "normal", true
	case "slave", "replica":
		return "replica", true
	case "master":
		return "master", true
	case "pubsub":
		return "pubsub", true
	}
	return "", false
}

// clientsByID lists the connected clients in id order, as Redis's client
// list is in connection order.
func (s *Server) clientsByID() []*Client {
	s.mu.Lock()
	out := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// appendInfo appends c's CLIENT LIST line in Redis 7.0's format. x is the
// command asking: for its own client the running command and state are
// shown, for others what they last published. Buffer sizes are not ours
// to measure the way Redis does; they are plausible fixed values.
func (c *Client) appendInfo(b []byte, x *Ctx) []byte {
	self := c == x.cl
	if self {
		c.publish()
	}
	now := time.Now()
	cmd := "NULL"
	if self {
		cmd = x.cmd.Name
	} else if lc := c.lastCmd.Load(); lc != nil {
		cmd = lc.Name
	}
	flags := ""
	if c.clientType() == "replica" {
		flags += "S" // Redis's order: S first
	}
	if clientFlag(c.shared.flags.Load())&cflagMonitor != 0 {
		flags += "O"
	}
	if c.clientType() == "master" {
		flags += "M" // a replica's link to its master
	}
	if clientFlag(c.shared.flags.Load())&cflagPubSub != 0 {
		flags += "P"
	}
	if c.shared.multi.Load() >= 0 {
		flags += "x"
	}
	if clientFlag(c.shared.flags.Load())&cflagBlocked != 0 {
		flags += "b"
	}
	if c.watchDirty.Load() {
		flags += "d"
	}
	if c.isUnix {
		flags += "U"
	}
	if clientFlag(c.shared.flags.Load())&cflagNoEvict != 0 {
		flags += "e"
	}
	if flags == "" {
		flags = "N"
	}
	argvMem := int64(0)
	if self {
		for _, a := range x.Args {
			argvMem += int64(len(a))
		}
	}
	idle := now.UnixMilli() - c.lastActive.Load()
	if self {
		idle = 0
	}
	b = append(b, "id="...)
	b = strconv.AppendInt(b, c.id, 10)
	b = append(b, " addr="...)
	b = append(b, c.addr...)
	b = append(b, " laddr="...)
	b = append(b, c.laddr...)
	b = append(b, " fd="...)
	b = strconv.AppendInt(b, c.fd, 10)
	b = append(b, " name="...)
	b = append(b, c.Name()...)
	b = append(b, " age="...)
	b = strconv.AppendInt(b, int64(now.Sub(c.created)/time.Second), 10)
	b = append(b, " idle="...)
	b = strconv.AppendInt(b, idle/1000, 10)
	b = append(b, " flags="...)
	b = append(b, flags...)
	b = append(b, " db="...)
	b = strconv.AppendInt(b, int64(c.shared.db.Load()), 10)
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, int64(c.shared.sub.Load()), 10)
	b = append(b, " psub="...)
	b = strconv.AppendInt(b, int64(c.shared.psub.Load()), 10)
	b = append(b, " ssub="...)
	b = strconv.AppendInt(b, int64(c.shared.ssub.Load()), 10)
	b = append(b, " multi="...)
	b = strconv.AppendInt(b, int64(c.shared.multi.Load()), 10)
	b = append(b, " qbuf=0 qbuf-free=0 argv-mem="...)
	b = strconv.AppendInt(b, argvMem, 10)
	b = append(b, " multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 tot-mem="...)
	b = strconv.AppendInt(b, 2048+argvMem, 10)
	b = append(b, " events=r cmd="...)
	b = append(b, cmd...)
	b = append(b, " user="...)
	b = append(b, c.userName()...)
	b = append(b, " redir=-1 resp="...)
	b = strconv.AppendInt(b, int64(c.shared.proto.Load()), 10)
	b = append(b, '\n')
	return b
}

// clientKill is CLIENT KILL addr (the old form: OK or "No such client") and
// CLIENT KILL <filter> <value> ... (the number of clients killed). SKIPME
// defaults to yes in the new form. A killed client's connection is closed
// at once; the caller itself is closed after its reply.
func clientKill(x *Ctx) {
	if len(x.Args) == 3 {
		addr := string(x.Args[2])
		for _, c := range x.srv.clientsByID() {
			if c.addr == addr {
				x.W.OK()
				x.kill(c)
				return
			}
		}
		x.Error(ErrNoSuchClient)
		return
	}
	if len(x.Args)%2 != 0 {
		x.Error(ErrSyntax)
		return
	}
	var (
		id          int64
		typ         string
		addr, laddr *string
		user        *aclUser
		skipMe      = true
	)
	for i := 2; i < len(x.Args); i += 2 {
		opt, val := strings.ToLower(string(x.Args[i])), x.Args[i+1]
		switch opt {
		case "id":
			n, ok := resp.ParseInt(val)
			if !ok || n <= 0 {
				x.Error(ErrClientIDPositive)
				return
			}
			id = n
		case "type":
			t, ok := clientType(val)
			if !ok {
				x.Error(errUnknownClientType(cstring(val)))
				return
			}
			typ = t
		case "addr":
			s := string(val)
			addr = &s
		case "laddr":
			s := string(val)
			laddr = &s
		case "user":
			u := x.srv.acl.users.Load().get(string(val))
			if u == nil {
				x.Error(errNoSuchUser(cstring(val)))
				return
			}
			user = u
		case "skipme":
			switch strings.ToLower(string(val)) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				x.Error(ErrSyntax)
				return
			}
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	var victims []*Client
	for _, c := range x.srv.clientsByID() {
		switch {
		case id != 0 && c.id != id,
			typ != "" && typ != c.clientType(),
			addr != nil && c.addr != *addr,
			laddr != nil && c.laddr != *laddr,
			user != nil && c.shared.user.Load() != user,
			skipMe && c == x.cl,
			c.killed.Load(): // closing already: gone, as Redis frees it at once
			continue
		}
		victims = append(victims, c)
	}
	x.W.Int(int64(len(victims)))
	for _, c := range victims {
		x.kill(c)
	}
}

// kill closes c: another connection at once, the caller's own after its
// reply has been sent.
func (x *Ctx) kill(c *Client) {
	if c == x.cl {
		c.closeAfter = true
		return
	}
	c.killed.Store(true)
	c.closeConn()
}

func clientNoEvict(x *Ctx) {
	switch strings.ToLower(string(x.Args[2])) {
	case "on":
		setClientFlag(&x.cl.shared.flags, cflagNoEvict, true)
	case "off":
		setClientFlag(&x.cl.shared.flags, cflagNoEvict, false)
	default:
		x.Error(ErrSyntax)
		return
	}
	x.W.OK()
}

func setClientFlag(f *atomic.Uint32, bit clientFlag, on bool) {
	for {
		old := f.Load()
		nu := old &^ uint32(bit)
		if on {
			nu |= uint32(bit)
		}
		if f.CompareAndSwap(old, nu) {
			return
		}
	}
}

// clientReply is CLIENT REPLY ON|OFF|SKIP. Only ON answers (+OK); OFF and
// SKIP are silent themselves.
func clientReply(x *Ctx) {
	switch strings.ToLower(string(x.Args[2])) {
	case "on":
		x.cl.reply = replyOn
		x.cl.replyKeep = true
		x.W.OK()
	case "off":
		x.cl.reply = replyOff
	case "skip":
		if x.cl.reply != replyOff {
			x.cl.reply = replySkipNext
		}
	default:
		x.Error(ErrSyntax)
	}
}

// writes reports whether cmd may write: a write command, or EXEC of a queue
// holding one.
func (c *Client) writes(cmd *Command) bool {
	const w = FlagWrite | FlagMayReplicate
	if cmd.Flags&w != 0 {
		return true
	}
	if cmd.Name == "exec" && c.multi != nil {
		for _, q := range c.multi.cmds {
			if q.cmd.Flags&w != 0 {
				return true
			}
		}
	}
	return false
}

// clientPause is CLIENT PAUSE timeout [WRITE|ALL]. A pause already in
// effect is extended, never shortened, and ALL wins over WRITE, as in
// Redis. Like Redis the deadline is now + timeout with wrapping
// arithmetic, so an enormous timeout lands in the past and pauses nobody.
func clientPause(x *Ctx) {
	n, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrPauseTimeout)
		return
	}
	if n < 0 {
		x.Error(ErrPauseNegative)
		return
	}
	writeOnly := false
	if len(x.Args) == 4 {
		switch strings.ToLower(string(x.Args[3])) {
		case "write":
			writeOnly = true
		case "all":
		default:
			x.Error(ErrPauseMode)
			return
		}
	} else if len(x.Args) > 4 {
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	until := time.Now().UnixMilli()
	if n > 0 {
		until += n
	}
	x.srv.pause(pauseByClient, until, writeOnly)
	x.W.OK()
}

// clientUnpause ends the pause of CLIENT PAUSE at once; a failover's
// stays, as in Redis.
func clientUnpause(x *Ctx) {
	x.srv.unpause(pauseByClient)
	x.W.OK()
}

// clientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked
// in a blocking pop answers as its timeout would, or -UNBLOCKED; 1 if
// the client was blocked, else 0.
func clientUnblock(x *Ctx) {
	id, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	withError := false
	if len(x.Args) == 4 {
		r := strings.ToLower(string(x.Args[3]))
		if r != "timeout" && r != "error" {
			x.Error(ErrUnblockReason)
			return
		}
		withError = r == "error"
	} else if len(x.Args) > 4 {
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	x.srv.mu.Lock()
	c := x.srv.clients[id]
	x.srv.mu.Unlock()
	if c != nil && x.srv.unblockClient(c, withError) {
		x.W.Int(1)
		return
	}
	x.W.Int(0)
}

func clientGetRedir(x *Ctx) { x.W.Int(-1) }

func clientTrackingInfo(x *Ctx) {
	x.W.Map(3)
	x.W.BulkString("flags")
	x.W.Set(1)
	x.W.BulkString("off")
	x.W.BulkString("redirect")
	x.W.Int(-1)
	x.W.BulkString("prefixes")
	x.W.Array(0)
}

// clientTracking: the options are checked as Redis does, then turning
// tracking off is a no-op; we do not offer client-side caching, so turning
// it on is refused rather than silently never invalidating.
func clientTracking(x *Ctx) {
	on := false
	switch strings.ToLower(string(x.Args[2])) {
	case "on":
		on = true
	case "off":
	default:
		x.Error(ErrSyntax)
		return
	}
	for i := 3; i < len(x.Args); i++ {
		more := len(x.Args) - 1 - i
		switch opt := strings.ToLower(string(x.Args[i])); {
		case opt == "redirect" && more >= 1:
			i++
			id, ok := resp.ParseInt(x.Args[i])
			if !ok {
				x.Error(ErrNotInteger)
				return
			}
			if !x.srv.hasClient(id) {
				x.Error(ErrRedirectNoClient)
				return
			}
		case opt == "prefix" && more >= 1:
			i++
		case opt == "bcast", opt == "optin", opt == "optout", opt == "noloop":
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	if on {
		x.Error(ErrTrackingUnsupported)
		return
	}
	x.W.OK()
}

func (s *Server) hasClient(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id] != nil
}

func clientCaching(x *Ctx) { x.Error(ErrCachingNoTracking) }

func clientHelp(x *Ctx) {
	writeHelp(x, "CLIENT", []string{
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR",
		"    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"UNPAUSE",
		"    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
	})
}
