package cell

import (
	"sort"
	"sync/atomic"
)

// Flag is a command property that changes how dispatch treats it. The
// exported ones mirror Redis's command flags (COMMAND INFO prints them).
type Flag uint32

const (
	FlagWrite Flag = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagAsking
	FlagFast
	FlagNoAuth
	FlagMayReplicate
	FlagSentinel
	FlagOnlySentinel
	FlagNoMandatoryKeys
	FlagProtected
	FlagModule
	FlagAllowBusy
	FlagNoMulti
	FlagMovableKeys

	// Ours, not shown by COMMAND INFO.

	// flagWholeDB commands read or write every key of the selected database
	// (KEYS, SCAN, DBSIZE, FLUSHDB): dispatch locks all its shards.
	flagWholeDB
	// flagShardAtATime commands (KEYS, SCAN) walk the database and lock
	// its shards themselves, one at a time and a bounded number of keys
	// per hold (Ctx.lockShard), so that other clients get in between the
	// steps: callAt takes no lock for them. Under EXEC and in scripts,
	// which hold every shard (flagWholeDB), they lock nothing.
	flagShardAtATime
	// flagAllDBs commands touch every database (FLUSHALL).
	flagAllDBs
	// flagTxn commands drive a transaction and are never queued
	// (MULTI, EXEC, DISCARD, WATCH, plus QUIT and RESET).
	flagTxn
	// flagScript commands run a script (EVAL and friends): dispatch locks
	// their declared keys, and the script may need more (script_shards.go).
	flagScript
	// flagChannelKeys commands' keys are shard channels (SPUBLISH,
	// SSUBSCRIBE): cluster mode routes them, but they are no keys of the
	// keyspace, so nothing locks them and scripts need not declare them.
	flagChannelKeys
)

// Handler runs one command. The shards holding the command's keys are
// locked by dispatch before it is called.
type Handler func(x *Ctx)

// Command is one entry of the command table.
type Command struct {
	Name  string // lower-case full name: "get", "config|get"
	Arity int    // Redis's arity: N exactly, -N at least N, counting the name
	Flags Flag
	// Key positions as Redis's legacy (first, last, step) triple; last < 0
	// counts from the end. Zero first means no keys.
	FirstKey, LastKey, Step int
	// Keys computes key positions for commands whose keys move (EVAL).
	Keys func(args [][]byte) []int
	// ReachesAllDBs says whether these arguments reach a database other
	// than the selected one (COPY ... DB n, MOVE): dispatch, EXEC and
	// scripts then hold every database, as for flagAllDBs.
	ReachesAllDBs func(args [][]byte) bool
	// KeyFlags gives the flags of the key at args[i] where they depend on
	// the arguments (COMMAND GETKEYSANDFLAGS of BITFIELD, SORT ... STORE).
	KeyFlags func(args [][]byte, i int) KeyFlag
	// ReachesWholeDB says whether these arguments reach keys they do not
	// name (SORT's BY and GET patterns): dispatch, EXEC and scripts then
	// hold every shard of the database, as for flagWholeDB.
	ReachesWholeDB func(args [][]byte) bool
	Handler        Handler
	// Sub holds the subcommands of a container command (CONFIG, CLIENT).
	Sub map[string]*Command

	// Metadata for COMMAND INFO / DOCS / LIST only; see command_meta.go for
	// how to fill it. The zero values are valid.
	ACL      ACLCategory // explicit ACL categories; implicit ones come from Flags
	Tips     []string
	KeySpecs []KeySpec
	Doc      *CommandDoc

	// id numbers the command for its Server's per-command statistics
	// (Server.cmdStats): each Server counts its own. 0 for a command
	// never registered.
	id int
}

// cmdStats feeds INFO commandstats.
type cmdStats struct {
	calls, usec, rejected, failed atomic.Int64
	// latency feeds INFO latencystats; allocated on the first call
	// (latency.go).
	latency atomic.Pointer[latencyHist]
}

// commands is the table, keyed by lower-case name. It is filled by the
// register calls at the top of each cmd_*.go file and read-only afterwards.
var commands = map[string]*Command{}

// registered is how many ids register has given out, 0 included.
var registered = 1

// register adds commands to the table. A name with '|' is a subcommand and
// attaches to its container, which must be registered first.
func register(cmds ...*Command) {
	for _, c := range cmds {
		if c.Step == 0 && c.FirstKey > 0 {
			c.Step = 1
		}
		c.id = registered
		registered++
		if parent, sub, ok := cutPipe(c.Name); ok {
			p := commands[parent]
			if p == nil {
				panic("cell: subcommand before its container: " + c.Name)
			}
			if p.Sub == nil {
				p.Sub = map[string]*Command{}
			}
			p.Sub[sub] = c
			continue
		}
		if commands[c.Name] != nil {
			panic("cell: command registered twice: " + c.Name)
		}
		commands[c.Name] = c
	}
}

func cutPipe(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '|' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// lookupCommand finds a command by name in any letter case without
// allocating: the lower-cased name is built in a stack buffer, and the map
// lookup by string(bytes) does not copy.
func lookupCommand(table map[string]*Command, name []byte) *Command {
	var buf [32]byte
	if len(name) > len(buf) {
		return nil
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return table[string(buf[:len(name)])]
}

// arityOK applies Redis's arity rule to argc (the name included).
func (c *Command) arityOK(argc int) bool {
	if c.Arity >= 0 {
		return argc == c.Arity
	}
	return argc >= -c.Arity
}

// keyIndexes appends the positions of the keys in args.
func (c *Command) keyIndexes(args [][]byte, dst []int) []int {
	if c.Keys != nil {
		return append(dst, c.Keys(args)...)
	}
	if c.FirstKey <= 0 || c.FirstKey >= len(args) {
		return dst
	}
	last := c.LastKey
	if last < 0 {
		last = len(args) + last
	}
	if last >= len(args) {
		last = len(args) - 1
	}
	for i := c.FirstKey; i <= last; i += c.Step {
		dst = append(dst, i)
	}
	return dst
}

// commandNames lists the table sorted, for COMMAND and its tests.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// wholeDB says whether cmd with args holds every shard of its database:
// flagWholeDB, or arguments that reach keys they do not name.
func (c *Command) wholeDB(args [][]byte) bool {
	return c.Flags&flagWholeDB != 0 || c.ReachesWholeDB != nil && c.ReachesWholeDB(args)
}

// allDBs says whether cmd with args holds every database: flagAllDBs, or
// arguments that reach another database (ReachesAllDBs).
func (c *Command) allDBs(args [][]byte) bool {
	return c.Flags&flagAllDBs != 0 || c.ReachesAllDBs != nil && c.ReachesAllDBs(args)
}
