package cell

import (
	"math/bits"
	"strings"
)

// COMMAND and its subcommands: the command table as Redis 7.0 reports it.
// What each entry shows comes from its table fields (command_meta.go).
// Where Redis's order is that of its hash tables (the full table,
// subcommands, COMMAND LIST), ours is sorted by name.

func init() {
	meta := func(c *Command, summary, since, complexity string, tips ...string) *Command {
		c.ACL |= ACLConnection
		c.Doc = &CommandDoc{summary, since, "server", complexity}
		c.Tips = tips
		return c
	}
	const ls = FlagLoading | FlagStale
	register(
		meta(&Command{Name: "command", Arity: -1, Flags: ls, Handler: commandCmd},
			"Get array of Redis command details", "2.8.13", "O(N) where N is the total number of Redis commands", "nondeterministic_output_order"),
		meta(&Command{Name: "command|count", Arity: 2, Flags: ls, Handler: commandCount},
			"Get total number of Redis commands", "2.8.13", "O(1)"),
		meta(&Command{Name: "command|docs", Arity: -2, Flags: ls, Handler: commandDocs},
			"Get array of specific Redis command documentation", "7.0.0", "O(N) where N is the number of commands to look up", "nondeterministic_output_order"),
		meta(&Command{Name: "command|getkeys", Arity: -4, Flags: ls, Handler: commandGetKeys},
			"Extract keys given a full Redis command", "2.8.13", "O(N) where N is the number of arguments to the command"),
		meta(&Command{Name: "command|getkeysandflags", Arity: -4, Flags: ls, Handler: commandGetKeys},
			"Extract keys and access flags given a full Redis command", "7.0.0", "O(N) where N is the number of arguments to the command"),
		meta(&Command{Name: "command|help", Arity: 2, Flags: ls, Handler: commandHelp},
			"Show helpful text about the different subcommands", "5.0.0", "O(1)"),
		meta(&Command{Name: "command|info", Arity: -2, Flags: ls, Handler: commandInfo},
			"Get array of specific Redis command details, or all when no argument is given.", "2.8.13", "O(N) where N is the number of commands to look up", "nondeterministic_output_order"),
		meta(&Command{Name: "command|list", Arity: -2, Flags: ls, Handler: commandList},
			"Get an array of Redis command names", "7.0.0", "O(N) where N is the total number of Redis commands", "nondeterministic_output_order"),
	)
}

// commandCmd is COMMAND without a subcommand: every command's entry.
func commandCmd(x *Ctx) {
	names := commandNames()
	x.W.Array(len(names))
	for _, n := range names {
		writeCommandInfo(x.W, commands[n])
	}
}

func commandCount(x *Ctx) { x.W.Int(int64(len(commands))) }

// commandInfo is COMMAND INFO [name ...]: an entry per name, null for names
// that are no command; with no names, every command.
func commandInfo(x *Ctx) {
	if len(x.Args) == 2 {
		commandCmd(x)
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, name := range x.Args[2:] {
		if c := lookupFullName(name); c != nil {
			writeCommandInfo(x.W, c)
		} else {
			x.W.Null()
		}
	}
}

// commandDocs is COMMAND DOCS [name ...]: a map of name to docs; unknown
// names are left out.
func commandDocs(x *Ctx) {
	var found []*Command
	if len(x.Args) == 2 {
		for _, n := range commandNames() {
			found = append(found, commands[n])
		}
	} else {
		for _, name := range x.Args[2:] {
			if c := lookupFullName(name); c != nil {
				found = append(found, c)
			}
		}
	}
	x.W.Map(len(found))
	for _, c := range found {
		x.W.BulkString(c.Name)
		writeCommandDocs(x.W, c)
	}
}

// commandGetKeys is COMMAND GETKEYS and GETKEYSANDFLAGS: the keys of a
// full command line, found with the same positions dispatch locks.
func commandGetKeys(x *Ctx) {
	withFlags := strings.EqualFold(string(x.Args[1]), "getkeysandflags")
	args := x.Args[2:]
	c := lookupCommand(commands, args[0])
	if c != nil && c.Sub != nil && len(args) >= 2 {
		c = lookupCommand(c.Sub, args[1])
	}
	switch {
	case c == nil:
		x.Error(ErrInvalidCommand)
		return
	case c.Keys == nil && len(c.keySpecs()) == 0:
		x.Error(ErrNoKeyArgs)
		return
	case !c.arityOK(len(args)):
		x.Error(ErrInvalidArgCount)
		return
	}
	keys := c.keyIndexes(args, nil)
	if len(keys) == 0 {
		if c.Flags&FlagNoMandatoryKeys != 0 {
			x.W.Array(0)
			return
		}
		x.Error(ErrInvalidArgs)
		return
	}
	specs := c.keySpecs()
	x.W.Array(len(keys))
	for _, i := range keys {
		if !withFlags {
			x.W.Bulk(args[i])
			continue
		}
		x.W.Array(2)
		x.W.Bulk(args[i])
		f := c.keyFlags(specs, args, i) // command_redis_meta.go
		n := bits.OnesCount64(uint64(f))
		x.W.Set(n)
		for b, name := range keyFlagNames {
			if f&(1<<b) != 0 {
				x.W.Status(name)
			}
		}
	}
}

// commandList is COMMAND LIST [FILTERBY MODULE m | ACLCAT c | PATTERN p]:
// the full names of commands and subcommands.
func commandList(x *Ctx) {
	keep := func(*Command) bool { return true }
	if len(x.Args) > 2 {
		if len(x.Args) != 5 || !strings.EqualFold(string(x.Args[2]), "filterby") {
			x.Error(ErrSyntax)
			return
		}
		arg := string(x.Args[4])
		switch strings.ToLower(string(x.Args[3])) {
		case "module":
			keep = func(c *Command) bool { return c.Flags&FlagModule != 0 && arg == moduleName }
		case "aclcat":
			cat := aclCategoryByName(arg)
			keep = func(c *Command) bool { return cat != 0 && c.aclCategories()&cat != 0 }
		case "pattern":
			keep = func(c *Command) bool { return globMatchFold([]byte(arg), []byte(c.Name)) }
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	var out []string
	for _, n := range commandNames() {
		c := commands[n]
		if keep(c) {
			out = append(out, c.Name)
		}
		if c.Sub != nil {
			for _, s := range sortedSubcommands(c) {
				if keep(s) {
					out = append(out, s.Name)
				}
			}
		}
	}
	x.W.Array(len(out))
	for _, n := range out {
		x.W.BulkString(n)
	}
}

func commandHelp(x *Ctx) {
	writeHelp(x, "COMMAND", []string{
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.",
	})
}

// writeHelp is Redis's addReplyHelp: a header line, the command's lines,
// and the HELP entry every container ends with, as status replies.
func writeHelp(x *Ctx, name string, lines []string) {
	x.W.Array(len(lines) + 3)
	x.W.Status(name + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		x.W.Status(l)
	}
	x.W.Status("HELP")
	x.W.Status("    Prints this help.")
}
