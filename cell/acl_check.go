package cell

import (
	"crypto/subtle"
	"sync"
	"sync/atomic"
	"time"
)

// Permission checks: which of a command's arguments are keys and channels,
// and whether some selector of the user allows the command with them
// (Redis's ACLCheckAllUserCommandPerm). Dispatch calls aclDenied only
// when the client's user is not open, so the default user with every
// permission costs one flag load per command.

// Why a check failed, in Redis's ACL_DENIED_* order: the most specific
// reason wins when several selectors fail.
const (
	aclOK = iota
	aclDeniedCmd
	aclDeniedKey
	aclDeniedAuth
	aclDeniedChannel
)

// Where a denied command ran, for ACL LOG's context field.
const (
	aclCtxToplevel = "toplevel"
	aclCtxMulti    = "multi"
	aclCtxLua      = "lua"
)

// aclState is the server's users and its ACL log.
type aclState struct {
	// mu serializes changes to the users (SETUSER, DELUSER, LOAD);
	// readers go through users and each user's rules without it.
	mu    sync.Mutex
	users atomic.Pointer[aclUsers]
	log   aclLog
	// pubsubAll is acl-pubsub-default allchannels: new users and
	// selectors may use every channel.
	pubsubAll atomic.Bool
}

func (a *aclState) init() {
	a.users.Store(newACLUsers())
	a.log.max.Store(128)
}

// defaultUser is the user every connection starts as.
func (s *Server) defaultUser() *aclUser { return s.acl.users.Load().def }

// startsAuthed reports whether a new connection needs no AUTH: the
// default user is on and needs no password.
func (s *Server) startsAuthed() bool {
	r := s.defaultUser().rules.Load()
	return r.enabled && r.nopass
}

// authenticate checks a user name and password as Redis's
// ACLCheckUserCredentials: the user must exist, be on, and be nopass or
// have the password among its hashes.
func (s *Server) authenticate(name, pass []byte) *aclUser {
	u := s.acl.users.Load().get(string(name))
	if u == nil {
		return nil
	}
	r := u.rules.Load()
	if !r.enabled {
		return nil
	}
	if r.nopass {
		return u
	}
	h := aclHash(pass)
	for _, p := range r.passwords {
		if subtle.ConstantTimeCompare([]byte(p), []byte(h)) == 1 {
			return u
		}
	}
	return nil
}

// aclKeyFlags are the permissions a key's spec flags ask for: access
// reads, insert, delete and update write.
func aclKeyFlags(f KeyFlag) int {
	p := 0
	if f&KeyAccess != 0 {
		p |= aclPermRead
	}
	if f&(KeyInsert|KeyDelete|KeyUpdate) != 0 {
		p |= aclPermWrite
	}
	return p
}

// checkCommand checks cmd with args against every selector of r. It
// returns aclOK, or the reason and the index of the argument at fault.
func (r *aclRules) checkCommand(cmd *Command, args [][]byte) (int, int) {
	var keys []int
	keysDone := false
	reason, at := aclDeniedCmd, 0
	for _, s := range r.selectors {
		res, idx := s.check(cmd, args, &keys, &keysDone)
		if res == aclOK {
			return aclOK, 0
		}
		if res > reason || (res == reason && idx > at) {
			reason, at = res, idx
		}
	}
	return reason, at
}

// unrestrictedKeyAccess says whether a selector of r allows cmd with args
// and grants want on every key (Redis's
// ACLUserCheckCmdWithUnrestrictedKeyAccess).
func (r *aclRules) unrestrictedKeyAccess(cmd *Command, args [][]byte, want int) bool {
	var keys []int
	keysDone := false
	for _, s := range r.selectors {
		if res, _ := s.check(cmd, args, &keys, &keysDone); res == aclOK && s.allKeysFor(want) {
			return true
		}
	}
	return false
}

// allKeysFor says whether the selector grants want on every key:
// allkeys, or a pattern "*" with those permissions ("~*", "%R~*").
func (s *aclSelector) allKeysFor(want int) bool {
	if s.allKeys {
		return true
	}
	for _, p := range s.keys {
		if p.perm&want == want && p.pattern == "*" {
			return true
		}
	}
	return false
}

// check is one selector's verdict (Redis's ACLSelectorCheckCmd). keys
// caches the key positions between selectors.
func (s *aclSelector) check(cmd *Command, args [][]byte, keys *[]int, keysDone *bool) (int, int) {
	if !s.allCommands && cmd.Flags&FlagNoAuth == 0 && !s.bit(cmd.id) {
		i := 1
		if cmd.Name != "" && containsPipe(cmd.Name) {
			i = 2
		}
		allowed := false
		if i < len(args) {
			for _, a := range s.firstArgs[cmd.id] {
				if equalFold(args[i], a) {
					allowed = true
					break
				}
			}
		}
		if !allowed {
			return aclDeniedCmd, 0
		}
	}
	if !s.allKeys && cmd.Flags&flagChannelKeys == 0 {
		if !*keysDone {
			*keys = cmd.keyIndexes(args, nil)
			*keysDone = true
		}
		specs := cmd.keySpecs()
		for _, i := range *keys {
			if !s.keyAllowed(args[i], aclKeyFlags(cmd.keyFlags(specs, args, i))) {
				return aclDeniedKey, i
			}
		}
	}
	if !s.allChannels {
		pattern := cmd.Name == "psubscribe"
		first, last := aclChannelArgs(cmd, len(args))
		for i := first; i > 0 && i <= last; i++ {
			if !s.channelAllowed(args[i], pattern) {
				return aclDeniedChannel, i
			}
		}
	}
	return aclOK, 0
}

func containsPipe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '|' {
			return true
		}
	}
	return false
}

// aclChannelArgs is where the channels a command publishes or subscribes
// to are (Redis's getChannelsFromCommand); unsubscribing is always
// allowed. first is 0 for none.
func aclChannelArgs(cmd *Command, argc int) (first, last int) {
	switch cmd.Name {
	case "publish", "spublish":
		return 1, 1
	case "subscribe", "ssubscribe", "psubscribe":
		return 1, argc - 1
	}
	return 0, 0
}

// keyAllowed is Redis's ACLSelectorCheckKey: a pattern must grant every
// permission asked and match the key.
func (s *aclSelector) keyAllowed(key []byte, want int) bool {
	if s.allKeys {
		return true
	}
	for _, p := range s.keys {
		if p.perm&want != want {
			continue
		}
		if globMatch([]byte(p.pattern), key) {
			return true
		}
	}
	return false
}

// channelAllowed matches a channel against the patterns; a PSUBSCRIBE
// pattern must equal one of them literally.
func (s *aclSelector) channelAllowed(ch []byte, pattern bool) bool {
	if s.allChannels {
		return true
	}
	for _, p := range s.channels {
		if pattern && p == string(ch) || !pattern && globMatch([]byte(p), ch) {
			return true
		}
	}
	return false
}

// aclDenied checks the client's running command against its user's
// rules. On a denial it logs the event and returns the NOPERM reply.
func (c *Client) aclDenied(cmd *Command, args [][]byte) string {
	res, at := c.user.rules.Load().checkCommand(cmd, args)
	if res == aclOK {
		return ""
	}
	ctx := aclCtxToplevel
	if c.multi != nil {
		ctx = aclCtxMulti
	}
	c.aclLogDenial(cmd, res, ctx, aclObject(cmd, args, res, at), c.user.name)
	return errNoPerm(res, cmd.Name)
}

// aclObject is what a denial names: the command, or the key or channel.
func aclObject(cmd *Command, args [][]byte, res, at int) string {
	if res == aclDeniedCmd {
		return cmd.Name
	}
	return string(args[at])
}

// aclLogDenial adds an entry to the ACL log for this client; its
// client-info names shown as the running command.
func (c *Client) aclLogDenial(shown *Command, reason int, ctx, object, user string) {
	saved := c.ctx.cmd
	c.ctx.cmd = shown
	info := c.appendInfo(nil, &c.ctx)
	c.ctx.cmd = saved
	if n := len(info); n > 0 && info[n-1] == '\n' {
		info = info[:n-1]
	}
	c.srv.acl.log.add(&aclLogEntry{
		count: 1, reason: reason, context: ctx, object: object, username: user,
		ctime: time.Now().UnixMilli(), cinfo: string(info),
	}, int(c.srv.acl.logMax()))
}

func (a *aclState) logMax() int64 { return a.log.max.Load() }

// aclLog is ACL LOG's list, newest first.
type aclLog struct {
	mu      sync.Mutex
	entries []*aclLogEntry
	max     atomic.Int64 // acllog-max-len
}

type aclLogEntry struct {
	count    int64
	reason   int
	context  string
	object   string
	username string
	ctime    int64 // ms
	cinfo    string
}

// aclLogGroupMs is how close in time two alike denials must be to share
// an entry.
const aclLogGroupMs = 60000

// add records e, or bumps a like entry among the ten newest (Redis's
// addACLLogEntry), then trims the log to max entries.
func (l *aclLog) add(e *aclLogEntry, max int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < len(l.entries) && i < 10; i++ {
		o := l.entries[i]
		d := o.ctime - e.ctime
		if d < 0 {
			d = -d
		}
		if o.reason == e.reason && o.context == e.context && d <= aclLogGroupMs &&
			o.object == e.object && o.username == e.username {
			o.cinfo, o.ctime = e.cinfo, e.ctime
			o.count++
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = o
			return
		}
	}
	l.entries = append(l.entries, nil)
	copy(l.entries[1:], l.entries)
	l.entries[0] = e
	if len(l.entries) > max {
		l.entries = l.entries[:max]
	}
}

func aclReasonName(r int) string {
	switch r {
	case aclDeniedCmd:
		return "command"
	case aclDeniedKey:
		return "key"
	case aclDeniedChannel:
		return "channel"
	case aclDeniedAuth:
		return "auth"
	}
	return "unknown"
}

// aclAgeSeconds formats an entry's age as Redis's addReplyDouble.
func aclAgeSeconds(now, ctime int64) float64 { return float64(now-ctime) / 1000 }
