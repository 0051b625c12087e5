package cell

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// ACL and its subcommands, as Redis 7.0's aclCommand. The users and
// their rules live in acl_user.go, the checks in acl_check.go, the ACL
// file in acl_file.go.

func init() {
	base := FlagNoScript | FlagLoading | FlagStale
	admin := FlagAdmin | base
	doc := func(summary, since, complexity string) *CommandDoc {
		return &CommandDoc{summary, since, "server", complexity}
	}
	c := func(name string, arity int, flags Flag, h Handler, d *CommandDoc) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, Handler: h, Doc: d}
	}
	register(
		&Command{Name: "acl", Arity: -2, Handler: func(*Ctx) {},
			Doc: doc("A container for Access List Control commands ", "6.0.0", "Depends on subcommand.")},
		c("acl|cat", -2, base, aclCat, doc("List the ACL categories or the commands inside a category", "6.0.0", "O(1) since the categories and commands are a fixed set.")),
		c("acl|deluser", -3, admin, aclDelUser, doc("Remove the specified ACL users and the associated rules", "6.0.0", "O(1) amortized time considering the typical user.")),
		c("acl|dryrun", -4, admin, aclDryRun, doc("Returns whether the user can execute the given command without executing the command.", "7.0.0", "O(1).")),
		c("acl|genpass", -2, base, aclGenPass, doc("Generate a pseudorandom secure password to use for ACL users", "6.0.0", "O(1)")),
		c("acl|getuser", 3, admin, aclGetUser, doc("Get the rules for a specific ACL user", "6.0.0", "O(N). Where N is the number of password, command and pattern rules that the user has.")),
		c("acl|help", 2, FlagLoading|FlagStale, aclHelp, doc("Show helpful text about the different subcommands", "6.0.0", "O(1)")),
		c("acl|list", 2, admin, aclList, doc("List the current ACL rules in ACL config file format", "6.0.0", "O(N). Where N is the number of configured users.")),
		c("acl|load", 2, admin, aclLoad, doc("Reload the ACLs from the configured ACL file", "6.0.0", "O(N). Where N is the number of configured users.")),
		c("acl|log", -2, admin, aclLogCmd, doc("List latest events denied because of ACLs in place", "6.0.0", "O(N) with N being the number of entries shown.")),
		c("acl|save", 2, admin, aclSave, doc("Save the current ACL rules in the configured ACL file", "6.0.0", "O(N). Where N is the number of configured users.")),
		c("acl|setuser", -3, admin, aclSetUser, doc("Modify or create the rules for a specific ACL user", "6.0.0", "O(N). Where N is the number of rules provided.")),
		c("acl|users", 2, admin, aclUsersCmd, doc("List the username of all the configured ACL rules", "6.0.0", "O(N). Where N is the number of configured users.")),
		c("acl|whoami", 2, base, aclWhoAmI, doc("Return the name of the user associated to the current connection", "6.0.0", "O(1)")),
	)
}

// aclSetUser is ACL SETUSER name rule...: the rules apply to a copy of
// the user (or to a new user), all or none.
func aclSetUser(x *Ctx) {
	name := x.Args[2]
	if hasSpaces(name) {
		x.Error(ErrACLUserSpaces)
		return
	}
	ops, open := mergeSelectorArgs(x.Args[3:])
	if open >= 0 {
		x.Error(errACLUnmatched(x.Args[3+open]))
		return
	}
	a := &x.srv.acl
	a.mu.Lock()
	defer a.mu.Unlock()
	users := a.users.Load()
	u := users.get(string(name))
	var r *aclRules
	if u != nil {
		r = u.rules.Load().clone()
	} else {
		r = newRules(a.pubsubAll.Load())
	}
	for _, op := range ops {
		if err := r.apply(op, a.pubsubAll.Load()); err != nil {
			x.Error(errACLSetUser(op, err))
			return
		}
	}
	if u == nil {
		u = &aclUser{name: string(name)}
		u.set(r)
		users.add(u)
	} else {
		old := u.rules.Load()
		u.set(r)
		x.srv.killRevokedSubscribers(x, u, old, r)
	}
	x.W.OK()
}

// aclDelUser is ACL DELUSER name...: the users go, and so do their
// connections.
func aclDelUser(x *Ctx) {
	for _, n := range x.Args[2:] {
		if string(n) == "default" {
			x.Error(ErrACLDelDefault)
			return
		}
	}
	a := &x.srv.acl
	a.mu.Lock()
	users := a.users.Load()
	var gone []*aclUser
	for _, n := range x.Args[2:] {
		if u := users.remove(string(n)); u != nil {
			gone = append(gone, u)
		}
	}
	a.mu.Unlock()
	x.srv.disconnectUsers(x, gone)
	x.W.Int(int64(len(gone)))
}

// aclGetUser is ACL GETUSER name: the user's flags, password hashes, root
// selector and other selectors, or null.
func aclGetUser(x *Ctx) {
	u := x.srv.acl.users.Load().get(string(x.Args[2]))
	if u == nil {
		x.W.Null()
		return
	}
	r := u.rules.Load()
	w := x.W
	w.Map(6)
	w.BulkString("flags")
	flags := r.flagNames()
	w.Set(len(flags))
	for _, f := range flags {
		w.BulkString(f)
	}
	w.BulkString("passwords")
	w.Array(len(r.passwords))
	for _, p := range r.passwords {
		w.BulkString(p)
	}
	writeSelectorFields(w, r.root())
	w.BulkString("selectors")
	w.Array(len(r.selectors) - 1)
	for _, s := range r.selectors[1:] {
		w.Map(3)
		writeSelectorFields(w, s)
	}
}

func writeSelectorFields(w *resp.Writer, s *aclSelector) {
	w.BulkString("commands")
	w.BulkString(s.describeCommands())
	w.BulkString("keys")
	w.BulkString(s.keysText())
	w.BulkString("channels")
	w.BulkString(s.channelsText())
}

// aclList is ACL LIST: every user as a line of the ACL file.
func aclList(x *Ctx) {
	users := x.srv.acl.users.Load().sorted()
	x.W.Array(len(users))
	for _, u := range users {
		x.W.BulkString(u.line())
	}
}

// line is the user as ACL LIST and the ACL file write it.
func (u *aclUser) line() string {
	return "user " + u.name + " " + u.rules.Load().describe()
}

func aclUsersCmd(x *Ctx) {
	users := x.srv.acl.users.Load().sorted()
	x.W.Array(len(users))
	for _, u := range users {
		x.W.BulkString(u.name)
	}
}

func aclWhoAmI(x *Ctx) { x.W.BulkString(x.cl.user.name) }

// aclCat is ACL CAT [category]: the categories, or a category's commands.
func aclCat(x *Ctx) {
	switch len(x.Args) {
	case 2:
		x.W.Array(len(aclCategoryNames))
		for _, n := range aclCategoryNames {
			x.W.BulkString(n)
		}
	case 3:
		cat := aclCategoryByName(cstring(x.Args[2]))
		if cat == 0 {
			name := cstring(x.Args[2])
			if len(name) > 128 {
				name = name[:128]
			}
			x.Error("ERR Unknown category '" + name + "'")
			return
		}
		t := aclTable()
		var out []string
		for _, c := range t.order {
			if c.Flags&FlagModule != 0 {
				continue
			}
			if t.cats[c.id]&cat != 0 {
				out = append(out, c.Name)
			}
			for _, s := range t.subs[c.id] {
				if t.cats[s.id]&cat != 0 {
					out = append(out, s.Name)
				}
			}
		}
		x.W.Array(len(out))
		for _, n := range out {
			x.W.BulkString(n)
		}
	default:
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
	}
}

// aclGenPass is ACL GENPASS [bits]: random hex, 256 bits by default.
func aclGenPass(x *Ctx) {
	if len(x.Args) > 3 {
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	bits := int64(256)
	if len(x.Args) == 3 {
		n, ok := resp.ParseInt(x.Args[2])
		if !ok {
			x.Error(ErrNotInteger)
			return
		}
		bits = n
	}
	if bits <= 0 || bits > 4096 {
		x.Error(ErrACLGenpassBits)
		return
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	x.W.BulkString(hex.EncodeToString(buf)[:chars])
}

// aclLogCmd is ACL LOG [count | RESET].
func aclLogCmd(x *Ctx) {
	if len(x.Args) > 3 {
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	l := &x.srv.acl.log
	count := int64(10)
	if len(x.Args) == 3 {
		if equalFold(x.Args[2], "reset") {
			l.mu.Lock()
			l.entries = nil
			l.mu.Unlock()
			x.W.OK()
			return
		}
		n, ok := resp.ParseInt(x.Args[2])
		if !ok {
			x.Error(ErrNotInteger)
			return
		}
		count = max(n, 0)
	}
	l.mu.Lock()
	entries := l.entries[:min(int(min(count, int64(len(l.entries)))), len(l.entries))]
	copied := make([]aclLogEntry, len(entries))
	for i, e := range entries {
		copied[i] = *e
	}
	l.mu.Unlock()
	now := time.Now().UnixMilli()
	w := x.W
	w.Array(len(copied))
	for _, e := range copied {
		w.Map(7)
		w.BulkString("count")
		w.Int(e.count)
		w.BulkString("reason")
		w.BulkString(aclReasonName(e.reason))
		w.BulkString("context")
		w.BulkString(e.context)
		w.BulkString("object")
		w.BulkString(e.object)
		w.BulkString("username")
		w.BulkString(e.username)
		w.BulkString("age-seconds")
		w.Double(aclAgeSeconds(now, e.ctime))
		w.BulkString("client-info")
		w.BulkString(e.cinfo)
	}
}

// aclDryRun is ACL DRYRUN user command arg...: whether the user could
// run the command, without running it or logging a denial.
func aclDryRun(x *Ctx) {
	u := x.srv.acl.users.Load().get(string(x.Args[2]))
	if u == nil {
		x.Error("ERR User '" + cstring(x.Args[2]) + "' not found")
		return
	}
	args := x.Args[3:]
	cmd := lookupCommand(commands, args[0])
	if cmd != nil && cmd.Sub != nil && len(args) >= 2 {
		cmd = lookupCommand(cmd.Sub, args[1])
	}
	if cmd == nil {
		x.Error("ERR Command '" + cstring(args[0]) + "' not found")
		return
	}
	if !cmd.arityOK(len(args)) {
		x.Error(errArity(cmd.Name))
		return
	}
	res, at := u.rules.Load().checkCommand(cmd, args)
	switch res {
	case aclOK:
		x.W.OK()
	case aclDeniedCmd:
		x.W.BulkString("This user has no permissions to run the '" + cmd.Name + "' command")
	case aclDeniedKey:
		x.W.BulkString("This user has no permissions to access the '" + cstring(args[at]) + "' key")
	default:
		x.W.BulkString("This user has no permissions to access the '" + cstring(args[at]) + "' channel")
	}
}

func aclHelp(x *Ctx) {
	writeHelp(x, "ACL", []string{
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
	})
}
