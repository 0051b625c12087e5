package cell

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cellserver/cellserver/resp"
)

// ACL users, as Redis 7.0's acl.c has them. A user is a name and a set
// of rules: on/off, passwords (kept as SHA-256 hex digests), and
// selectors, each a command bitmap with key and channel patterns. The
// first selector is the root one (the rules written outside
// parentheses); a command is allowed when any selector allows it.
//
// Rules are copied on write: ACL SETUSER builds a new aclRules and
// stores it, so a connection checking its user's rules reads one
// immutable value without a lock. A user whose root selector allows
// every command, key and channel is "open" (the default user unless
// configured otherwise): dispatch then checks nothing but that flag.

// aclUser is one user. Clients point at it for as long as it exists.
type aclUser struct {
	name  string
	rules atomic.Pointer[aclRules]
	open  atomic.Bool // rules allow everything: dispatch skips the check
	gone  atomic.Bool // deleted (ACL DELUSER, ACL LOAD)
}

func (u *aclUser) set(r *aclRules) {
	u.rules.Store(r)
	u.open.Store(r.isOpen())
}

// aclRules is one version of a user's rules; never changed once stored.
type aclRules struct {
	enabled bool
	nopass  bool
	// sanitize is 0, or the last of sanitize-payload (1) and
	// skip-sanitize-payload (2) given: only shown, never enforced.
	sanitize  int
	passwords []string // hex SHA-256, in the order added
	selectors []*aclSelector
}

// keyPattern is a key glob with the access it grants.
type keyPattern struct {
	pattern string
	perm    int // aclPermRead | aclPermWrite
}

const (
	aclPermRead  = 1
	aclPermWrite = 2
	aclPermAll   = aclPermRead | aclPermWrite
)

// aclSelector is one selector: what commands, keys and channels it
// allows.
type aclSelector struct {
	root        bool
	allKeys     bool
	allChannels bool
	allCommands bool
	// future is set by +@all and cleared by -@all: Redis's reserved
	// command bit, which decides whether a description starts with +@all.
	future    bool
	cmds      []uint64         // bit per Command.id
	firstArgs map[int][]string // +cmd|arg: first arguments allowed for a denied command
	keys      []keyPattern     // in the order added
	channels  []string         // in the order added
}

func newSelector(root, allChannels bool) *aclSelector {
	return &aclSelector{root: root, allChannels: allChannels, cmds: make([]uint64, aclBitmapWords())}
}

func (s *aclSelector) clone() *aclSelector {
	n := *s
	n.cmds = append([]uint64(nil), s.cmds...)
	n.keys = append([]keyPattern(nil), s.keys...)
	n.channels = append([]string(nil), s.channels...)
	if s.firstArgs != nil {
		n.firstArgs = make(map[int][]string, len(s.firstArgs))
		for id, a := range s.firstArgs {
			n.firstArgs[id] = append([]string(nil), a...)
		}
	}
	return &n
}

func (r *aclRules) clone() *aclRules {
	n := *r
	n.passwords = append([]string(nil), r.passwords...)
	n.selectors = make([]*aclSelector, len(r.selectors))
	for i, s := range r.selectors {
		n.selectors[i] = s.clone()
	}
	return &n
}

func (r *aclRules) root() *aclSelector { return r.selectors[0] }

// isOpen reports whether the rules allow every command, key and channel
// through the root selector.
func (r *aclRules) isOpen() bool {
	s := r.root()
	return s.allCommands && s.allKeys && s.allChannels
}

func (s *aclSelector) bit(id int) bool {
	return id/64 < len(s.cmds) && s.cmds[id/64]&(1<<(id%64)) != 0
}

func (s *aclSelector) setBit(id int, on bool) {
	if id/64 >= len(s.cmds) {
		return
	}
	if on {
		s.cmds[id/64] |= 1 << (id % 64)
	} else {
		s.cmds[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// changePerm allows or denies cmd and, for a container, each of its
// subcommands (Redis's ACLChangeSelectorPerm).
func (s *aclSelector) changePerm(cmd *Command, on bool) {
	s.setBit(cmd.id, on)
	delete(s.firstArgs, cmd.id)
	for _, sub := range cmd.Sub {
		s.setBit(sub.id, on)
	}
}

// setCategory allows or denies every command of cat, subcommands
// included, in the table's order (Redis's
// ACLSetSelectorCommandBitsForCategory).
func (s *aclSelector) setCategory(cat ACLCategory, on bool) {
	for _, c := range aclTable().order {
		if c.Flags&FlagModule != 0 {
			continue
		}
		if aclCats(c)&cat != 0 {
			s.changePerm(c, on)
		}
		for _, sub := range aclTable().subs[c.id] {
			if aclCats(sub)&cat != 0 {
				s.changePerm(sub, on)
			}
		}
	}
}

// aclCommandTable is the command table as ACL rules see it: every
// command in a fixed order (by name, subcommands after their
// container), and each command's categories.
type aclCommandTable struct {
	order []*Command          // top-level commands by name
	subs  map[int][]*Command  // a container's subcommands by name
	cats  map[int]ACLCategory // by Command.id
	words int                 // bitmap words for every id
	names map[string]*Command // full names, lower case
}

var (
	aclTableOnce sync.Once
	aclTableVal  *aclCommandTable
)

// aclTable builds the table on first use, once every command is
// registered.
func aclTable() *aclCommandTable {
	aclTableOnce.Do(func() {
		t := &aclCommandTable{subs: map[int][]*Command{}, cats: map[int]ACLCategory{}, names: map[string]*Command{}}
		for _, n := range commandNames() {
			c := commands[n]
			t.order = append(t.order, c)
			t.cats[c.id] = redisCategories(c)
			t.names[c.Name] = c
			if c.Sub != nil {
				subs := sortedSubcommands(c)
				t.subs[c.id] = subs
				for _, s := range subs {
					t.cats[s.id] = redisCategories(s)
					t.names[s.Name] = s
				}
			}
		}
		t.words = (registered + 63) / 64
		aclTableVal = t
	})
	return aclTableVal
}

func aclBitmapWords() int { return aclTable().words }

func aclCats(c *Command) ACLCategory { return aclTable().cats[c.id] }

// redisCategories is a command's categories as Redis 7.0.15's COMMAND
// INFO lists them, or as its flags imply for commands Redis lacks.
func redisCategories(c *Command) ACLCategory {
	rc := redisCommands[c.Name]
	if rc == nil || rc.info == nil || len(rc.info.items) < 7 {
		return c.aclCategories()
	}
	var a ACLCategory
	for _, it := range rc.info.items[6].items {
		a |= aclCategoryByName(strings.TrimPrefix(it.str, "@"))
	}
	return a
}

// aclLookup finds a command by its full name ("get", "config|get") in
// the original table (rename-command does not apply to ACL rules).
func aclLookup(name string) *Command {
	return aclTable().names[strings.ToLower(name)]
}

// Errors of a rule, as Redis's ACLSetUserStringError words them.
var (
	errACLUnknown   = errors.New("Unknown command or category name in ACL")
	errACLSyntax    = errors.New("Syntax error")
	errACLKeysAll   = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errACLChansAll  = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errACLNoPass    = errors.New("The password you are trying to remove from the user does not exist")
	errACLBadHash   = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errACLDuplicate = errors.New("Duplicate user found. A user can only be defined once in config files")
	errACLFirstArg  = errors.New("Allowing first-arg of a subcommand is not supported")
)

// aclHash is a password's stored form.
func aclHash(pass []byte) string {
	h := sha256.Sum256(pass)
	return hex.EncodeToString(h[:])
}

func validHash(h []byte) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// hasSpaces reports whether s holds a space or NUL, which Redis refuses
// in user names and patterns.
func hasSpaces(s []byte) bool {
	for _, c := range s {
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// opIs compares a rule with a keyword as C's strcasecmp does: the rule
// ends at its first NUL.
func opIs(op []byte, word string) bool {
	return strings.EqualFold(cstring(op), word)
}

// apply applies one selector rule (Redis's ACLSetSelector).
func (s *aclSelector) apply(op []byte) error {
	if len(op) == 0 {
		return errACLSyntax
	}
	switch {
	case opIs(op, "allkeys") || opIs(op, "~*"):
		s.allKeys, s.keys = true, nil
	case opIs(op, "resetkeys"):
		s.allKeys, s.keys = false, nil
	case opIs(op, "allchannels") || opIs(op, "&*"):
		s.allChannels, s.channels = true, nil
	case opIs(op, "resetchannels"):
		s.allChannels, s.channels = false, nil
	case opIs(op, "allcommands") || opIs(op, "+@all"):
		for i := range s.cmds {
			s.cmds[i] = ^uint64(0)
		}
		s.allCommands, s.future, s.firstArgs = true, true, nil
	case opIs(op, "nocommands") || opIs(op, "-@all"):
		clear(s.cmds)
		s.allCommands, s.future, s.firstArgs = false, false, nil
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return errACLKeysAll
		}
		perm, off := aclPermAll, 1
		if op[0] == '%' {
			perm = 0
			for ; off < len(op); off++ {
				c := op[off]
				switch {
				case (c == 'R' || c == 'r') && perm&aclPermRead == 0:
					perm |= aclPermRead
					continue
				case (c == 'W' || c == 'w') && perm&aclPermWrite == 0:
					perm |= aclPermWrite
					continue
				case c == '~':
					off++
				default:
					return errACLSyntax
				}
				break
			}
		}
		if perm == 0 {
			return errACLSyntax
		}
		// "%R" without '~' leaves off at the end: an empty pattern with
		// the permissions read, as Redis's loop does.
		pat := op[min(off, len(op)):]
		if hasSpaces(pat) {
			return errACLSyntax
		}
		found := false
		for i := range s.keys {
			if s.keys[i].pattern == string(pat) {
				s.keys[i].perm |= perm
				found = true
				break
			}
		}
		if !found {
			s.keys = append(s.keys, keyPattern{string(pat), perm})
		}
		s.allKeys = false
	case op[0] == '&':
		if s.allChannels {
			return errACLChansAll
		}
		if hasSpaces(op[1:]) {
			return errACLSyntax
		}
		ch := string(op[1:])
		found := false
		for _, c := range s.channels {
			if c == ch {
				found = true
				break
			}
		}
		if !found {
			s.channels = append(s.channels, ch)
		}
		s.allChannels = false
	case op[0] == '+' && (len(op) < 2 || op[1] != '@'):
		name := cstring(op[1:])
		i := strings.LastIndexByte(name, '|')
		if i < 0 {
			cmd := aclLookup(name)
			if cmd == nil {
				return errACLUnknown
			}
			s.changePerm(cmd, true)
			return nil
		}
		cmd := aclLookup(name[:i])
		if cmd == nil {
			return errACLUnknown
		}
		if strings.IndexByte(name[:i], '|') >= 0 {
			return errACLFirstArg // a subcommand's first argument
		}
		sub := name[i+1:]
		if sub == "" {
			return errACLSyntax
		}
		if cmd.Sub != nil {
			sc := aclLookup(name)
			if sc == nil {
				return errACLUnknown
			}
			s.changePerm(sc, true)
			return nil
		}
		if s.firstArgs == nil {
			s.firstArgs = map[int][]string{}
		}
		for _, a := range s.firstArgs[cmd.id] {
			if strings.EqualFold(a, sub) {
				return nil
			}
		}
		s.firstArgs[cmd.id] = append(s.firstArgs[cmd.id], sub)
	case op[0] == '-' && (len(op) < 2 || op[1] != '@'):
		cmd := aclLookup(cstring(op[1:]))
		if cmd == nil {
			return errACLUnknown
		}
		s.changePerm(cmd, false)
	case (op[0] == '+' || op[0] == '-') && op[1] == '@':
		cat := aclCategoryByName(cstring(op[2:]))
		if cat == 0 {
			return errACLUnknown
		}
		s.setCategory(cat, op[0] == '+')
	default:
		return errACLSyntax
	}
	return nil
}

// apply applies one user rule to r (Redis's ACLSetUser). pubsubAll is
// acl-pubsub-default: whether new selectors allow every channel.
func (r *aclRules) apply(op []byte, pubsubAll bool) error {
	if len(op) == 0 {
		return nil
	}
	switch {
	case opIs(op, "on"):
		r.enabled = true
	case opIs(op, "off"):
		r.enabled = false
	case opIs(op, "skip-sanitize-payload"):
		r.sanitize = 2
	case opIs(op, "sanitize-payload"):
		r.sanitize = 1
	case opIs(op, "nopass"):
		r.nopass, r.passwords = true, nil
	case opIs(op, "resetpass"):
		r.nopass, r.passwords = false, nil
	case op[0] == '>' || op[0] == '#':
		var h string
		if op[0] == '>' {
			h = aclHash(op[1:])
		} else {
			if !validHash(op[1:]) {
				return errACLBadHash
			}
			h = string(op[1:])
		}
		found := false
		for _, p := range r.passwords {
			if p == h {
				found = true
				break
			}
		}
		if !found {
			r.passwords = append(r.passwords, h)
		}
		r.nopass = false
	case op[0] == '<' || op[0] == '!':
		var h string
		if op[0] == '<' {
			h = aclHash(op[1:])
		} else {
			if !validHash(op[1:]) {
				return errACLBadHash
			}
			h = string(op[1:])
		}
		for i, p := range r.passwords {
			if p == h {
				r.passwords = append(r.passwords[:i:i], r.passwords[i+1:]...)
				return nil
			}
		}
		return errACLNoPass
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(false, pubsubAll)
		inner := op[1 : len(op)-1]
		// Unbalanced quotes split into no words: an empty selector, as
		// Redis's sdssplitargs leaves it.
		words, ok := resp.SplitArgs(inner, nil)
		if !ok {
			words = nil
		}
		for _, w := range words {
			if err := s.apply(w); err != nil {
				return err
			}
		}
		r.selectors = append(r.selectors, s)
	case opIs(op, "clearselectors"):
		r.selectors = r.selectors[:1]
	case opIs(op, "reset"):
		r.nopass, r.passwords = false, nil
		root := r.root()
		root.allKeys, root.keys = false, nil
		root.allChannels, root.channels = pubsubAll, nil
		r.enabled = false
		r.sanitize = 1
		r.selectors = r.selectors[:1]
		root.apply([]byte("-@all"))
	default:
		return r.root().apply(op)
	}
	return nil
}

// newRules are a new user's rules: off, no password, nothing allowed.
func newRules(pubsubAll bool) *aclRules {
	return &aclRules{selectors: []*aclSelector{newSelector(true, pubsubAll)}}
}

// defaultRules are the default user's rules at start: everything
// allowed, no password needed.
func defaultRules() *aclRules {
	r := newRules(false)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		r.apply([]byte(op), false)
	}
	return r
}

// mergeSelectorArgs joins a selector written over several words, "(~a"
// "+get)", into one (Redis's ACLMergeSelectorArguments). It returns the
// index of an opening word never closed, or -1.
func mergeSelectorArgs(args [][]byte) ([][]byte, int) {
	out := make([][]byte, 0, len(args))
	open := -1
	var sel []byte
	for j, op := range args {
		if open < 0 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			sel = append([]byte(nil), op...)
			open = j
			continue
		}
		if open >= 0 {
			sel = append(append(sel, ' '), op...)
			if len(op) > 0 && op[len(op)-1] == ')' {
				out = append(out, sel)
				open = -1
			}
			continue
		}
		out = append(out, op)
	}
	if open >= 0 {
		return nil, open
	}
	return out, -1
}

// aclUsers is the server's user set.
type aclUsers struct {
	mu    sync.RWMutex
	users map[string]*aclUser
	def   *aclUser // the default user, never removed
}

func newACLUsers() *aclUsers {
	d := &aclUser{name: "default"}
	d.set(defaultRules())
	return &aclUsers{users: map[string]*aclUser{"default": d}, def: d}
}

func (a *aclUsers) get(name string) *aclUser {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.users[name]
}

func (a *aclUsers) add(u *aclUser) {
	a.mu.Lock()
	a.users[u.name] = u
	a.mu.Unlock()
}

// remove takes a user out of the set and returns it, or nil.
func (a *aclUsers) remove(name string) *aclUser {
	a.mu.Lock()
	defer a.mu.Unlock()
	u := a.users[name]
	delete(a.users, name)
	return u
}

// sorted lists the users by name, as Redis's radix tree orders them.
func (a *aclUsers) sorted() []*aclUser {
	a.mu.RLock()
	out := make([]*aclUser, 0, len(a.users))
	for _, u := range a.users {
		out = append(out, u)
	}
	a.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
