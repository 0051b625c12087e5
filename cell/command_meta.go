package cell

import (
	"math/bits"
	"sort"
	"strings"

	"github.com/cellserver/cellserver/resp"
)

// Command metadata shown by COMMAND, COMMAND INFO, COMMAND DOCS and COMMAND
// LIST. None of it changes how a command runs; it only has to read like
// Redis 7.0.15's table.
//
// For a command Redis has, the entries of command_redis.go win: Redis's
// own COMMAND INFO entry, key specs, tips and COMMAND DOCS map, generated
// from redis-server 7.0.15 (go generate; command_redis_meta.go). After
// registering a new command, run go generate ./cell. The fields below
// then serve the commands Redis lacks (CL.THROTTLE, CL.PROBE), the
// dispatch (Flags, key positions) and COMMAND LIST's filters.
//
// How to fill a table entry (the zero value is always valid):
//
//   - Flags: the Redis flags exactly as `COMMAND INFO <name>` on Redis 7.0
//     lists them (FlagLoading, FlagStale, ...). They also decide the implicit
//     ACL categories, as Redis's setImplicitACLCategories does: write ->
//     @write, readonly -> @read, admin -> @admin @dangerous, pubsub ->
//     @pubsub, fast -> @fast else @slow, blocking -> @blocking.
//   - ACL: only the categories Redis's command JSON names explicitly
//     (@string, @keyspace, @sortedset, @connection, @transaction, @dangerous,
//     ...); the implicit ones are added when printing.
//   - Tips: the command's tips in Redis's order ("nondeterministic_output",
//     "request_policy:all_shards", ...). Nil prints an empty set.
//   - KeySpecs: Redis's key specs in its order. When nil and FirstKey > 0, one
//     spec is derived from the legacy triple (flags RW access update for write
//     commands, RO access otherwise), which is right for most simple commands
//     but not all: copy the real ones from `COMMAND INFO` when they differ.
//   - Doc: summary, since, group and complexity for COMMAND DOCS. Nil gives
//     a docs entry with only the group (the command's Group or "generic").
//
// Subcommands are registered as "parent|sub" entries and get all of the above
// on their own.

// ACLCategory is a set of Redis ACL categories.
type ACLCategory uint32

const (
	ACLKeyspace ACLCategory = 1 << iota
	ACLRead
	ACLWrite
	ACLSet
	ACLSortedSet
	ACLList
	ACLHash
	ACLString
	ACLBitmap
	ACLHyperLogLog
	ACLGeo
	ACLStream
	ACLPubSub
	ACLAdmin
	ACLFast
	ACLSlow
	ACLBlocking
	ACLDangerous
	ACLConnection
	ACLTransaction
	ACLScripting
)

// aclCategoryNames is in Redis's ACLCommandCategories order, which is the
// order COMMAND INFO prints them in.
var aclCategoryNames = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// aclCategoryByName finds a category case-insensitively; 0 if unknown.
func aclCategoryByName(name string) ACLCategory {
	for i, n := range aclCategoryNames {
		if strings.EqualFold(n, name) {
			return 1 << i
		}
	}
	return 0
}

// KeyFlag is a key spec flag (RO, RW, access, ...).
type KeyFlag uint16

const (
	KeyRO KeyFlag = 1 << iota
	KeyRW
	KeyOW
	KeyRM
	KeyAccess
	KeyUpdate
	KeyInsert
	KeyDelete
	KeyNotKey
	KeyIncomplete
	KeyVariableFlags
)

var keyFlagNames = []string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", "incomplete", "variable_flags"}

// KeySpec is one of Redis 7's key specifications: where the search for keys
// begins (an index, or a keyword searched from StartFrom) and how the keys
// are found from there (a range, or a count at KeyNumIdx).
type KeySpec struct {
	Notes string
	Flags KeyFlag

	BeginIndex   int    // begin_search index (when Keyword is empty)
	Keyword      string // begin_search keyword
	StartFrom    int    // where the keyword search starts; negative from the end
	BeginUnknown bool   // begin_search type unknown (SORT's BY/GET)

	KeyNum                       bool // find_keys keynum instead of range
	FindUnknown                  bool // find_keys type unknown
	LastKey, KeyStep, Limit      int  // range
	KeyNumIdx, FirstKey, NumStep int  // keynum
}

// CommandDoc is what COMMAND DOCS reports for a command.
type CommandDoc struct {
	Summary, Since, Group, Complexity string
}

// flagNames lists the flags COMMAND INFO shows, in Redis's order. Redis
// hides may_replicate, sentinel, only_sentinel and protected.
var flagNames = []struct {
	f    Flag
	name string
}{
	{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"},
	{FlagModule, "module"}, {FlagAdmin, "admin"}, {FlagPubSub, "pubsub"},
	{FlagNoScript, "noscript"}, {FlagBlocking, "blocking"}, {FlagLoading, "loading"},
	{FlagStale, "stale"}, {FlagSkipMonitor, "skip_monitor"}, {FlagSkipSlowlog, "skip_slowlog"},
	{FlagAsking, "asking"}, {FlagFast, "fast"}, {FlagNoAuth, "no_auth"},
	{FlagNoMandatoryKeys, "no_mandatory_keys"}, {FlagNoMulti, "no_multi"},
	{FlagMovableKeys, "movablekeys"}, {FlagAllowBusy, "allow_busy"},
}

// aclCategories is the command's full category set: the declared ones plus
// those its flags imply. Module commands have no categories in Redis 7.0
// (modules could not declare any before 7.2).
func (c *Command) aclCategories() ACLCategory {
	if c.Flags&FlagModule != 0 {
		return c.ACL
	}
	a := c.ACL
	if c.Flags&FlagWrite != 0 {
		a |= ACLWrite
	}
	if c.Flags&FlagReadonly != 0 && a&ACLScripting == 0 {
		a |= ACLRead
	}
	if c.Flags&FlagAdmin != 0 {
		a |= ACLAdmin | ACLDangerous
	}
	if c.Flags&FlagPubSub != 0 {
		a |= ACLPubSub
	}
	if c.Flags&FlagFast != 0 {
		a |= ACLFast
	}
	if c.Flags&FlagBlocking != 0 {
		a |= ACLBlocking
	}
	if a&ACLFast == 0 {
		a |= ACLSlow
	}
	return a
}

// keySpecs returns the declared key specs, or the one the legacy triple
// implies.
func (c *Command) keySpecs() []KeySpec {
	if rc := redisCommands[c.Name]; rc != nil {
		return rc.specs // Redis's own (command_redis.go)
	}
	if c.KeySpecs != nil || c.FirstKey <= 0 {
		return c.KeySpecs
	}
	ks := KeySpec{BeginIndex: c.FirstKey, KeyStep: c.Step}
	if ks.KeyStep == 0 {
		ks.KeyStep = 1
	}
	if c.LastKey < 0 {
		ks.LastKey = c.LastKey
	} else {
		ks.LastKey = c.LastKey - c.FirstKey
	}
	switch {
	case c.Flags&FlagModule != 0, c.Flags&FlagWrite != 0:
		// A module command's legacy triple becomes RW access update.
		ks.Flags = KeyRW | KeyAccess | KeyUpdate
	default:
		ks.Flags = KeyRO | KeyAccess
	}
	return []KeySpec{ks}
}

// writeCommandInfo writes one COMMAND INFO entry (10 elements). Subcommands
// come sorted by name; Redis's order is its hash table's and differs from
// run to run.
func writeCommandInfo(w *resp.Writer, c *Command) {
	if rc := redisCommands[c.Name]; rc != nil && rc.info != nil {
		w.Array(10) // Redis's entry, with the subcommands served
		for _, it := range rc.info.items {
			it.write(w)
		}
		writeSubcommandInfo(w, c)
		return
	}
	w.Array(10)
	w.BulkString(c.Name)
	w.Int(int64(c.Arity))
	n := 0
	for _, f := range flagNames {
		if c.Flags&f.f != 0 {
			n++
		}
	}
	w.Set(n)
	for _, f := range flagNames {
		if c.Flags&f.f != 0 {
			w.Status(f.name)
		}
	}
	first, last, step := c.FirstKey, c.LastKey, c.Step
	if first <= 0 {
		first, last, step = 0, 0, 0
	}
	w.Int(int64(first))
	w.Int(int64(last))
	w.Int(int64(step))
	cats := c.aclCategories()
	w.Set(bits.OnesCount64(uint64(cats)))
	for i, name := range aclCategoryNames {
		if cats&(1<<i) != 0 {
			w.Status("@" + name)
		}
	}
	tips := c.Tips
	if rc := redisCommands[c.Name]; rc != nil {
		tips = rc.tips
	}
	w.Set(len(tips))
	for _, t := range tips {
		w.BulkString(t)
	}
	specs := c.keySpecs()
	w.Set(len(specs))
	for i := range specs {
		writeKeySpec(w, &specs[i])
	}
	writeSubcommandInfo(w, c)
}

// writeSubcommandInfo ends a COMMAND INFO entry with its subcommands.
func writeSubcommandInfo(w *resp.Writer, c *Command) {
	if c.Sub == nil {
		w.Set(0)
		return
	}
	subs := sortedSubcommands(c)
	w.Array(len(subs))
	for _, s := range subs {
		writeCommandInfo(w, s)
	}
}

func writeKeySpec(w *resp.Writer, ks *KeySpec) {
	if ks.Notes != "" {
		w.Map(4)
		w.BulkString("notes")
		w.BulkString(ks.Notes)
	} else {
		w.Map(3)
	}
	w.BulkString("flags")
	n := 0
	for i := range keyFlagNames {
		if ks.Flags&(1<<i) != 0 {
			n++
		}
	}
	w.Set(n)
	for i, name := range keyFlagNames {
		if ks.Flags&(1<<i) != 0 {
			w.Status(name)
		}
	}
	w.BulkString("begin_search")
	w.Map(2)
	w.BulkString("type")
	switch {
	case ks.BeginUnknown:
		w.BulkString("unknown")
		w.BulkString("spec")
		w.Map(0)
	case ks.Keyword != "":
		w.BulkString("keyword")
		w.BulkString("spec")
		w.Map(2)
		w.BulkString("keyword")
		w.BulkString(ks.Keyword)
		w.BulkString("startfrom")
		w.Int(int64(ks.StartFrom))
	default:
		w.BulkString("index")
		w.BulkString("spec")
		w.Map(1)
		w.BulkString("index")
		w.Int(int64(ks.BeginIndex))
	}
	w.BulkString("find_keys")
	w.Map(2)
	w.BulkString("type")
	switch {
	case ks.FindUnknown:
		w.BulkString("unknown")
		w.BulkString("spec")
		w.Map(0)
	case ks.KeyNum:
		w.BulkString("keynum")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("keynumidx")
		w.Int(int64(ks.KeyNumIdx))
		w.BulkString("firstkey")
		w.Int(int64(ks.FirstKey))
		w.BulkString("keystep")
		w.Int(int64(ks.NumStep))
	default:
		w.BulkString("range")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("lastkey")
		w.Int(int64(ks.LastKey))
		w.BulkString("keystep")
		w.Int(int64(ks.KeyStep))
		w.BulkString("limit")
		w.Int(int64(ks.Limit))
	}
}

// writeCommandDocs writes one command's COMMAND DOCS map (without its name).
func writeCommandDocs(w *resp.Writer, c *Command) {
	if rc := redisCommands[c.Name]; rc != nil && rc.docs != nil {
		// Redis's map, with the subcommands served.
		n := len(rc.docs.items) / 2
		if c.Sub != nil {
			n++
		}
		w.Map(n)
		for _, it := range rc.docs.items {
			it.write(w)
		}
		writeSubcommandDocs(w, c)
		return
	}
	d := c.Doc
	if d == nil {
		d = &CommandDoc{}
	}
	group := d.Group
	if group == "" {
		group = "generic"
		if c.Flags&FlagModule != 0 {
			group = "module"
		}
	}
	n := 1
	for _, s := range []string{d.Summary, d.Since, d.Complexity} {
		if s != "" {
			n++
		}
	}
	if c.Flags&FlagModule != 0 {
		n++
	}
	if c.Sub != nil {
		n++
	}
	w.Map(n)
	if d.Summary != "" {
		w.BulkString("summary")
		w.BulkString(d.Summary)
	}
	if d.Since != "" {
		w.BulkString("since")
		w.BulkString(d.Since)
	}
	w.BulkString("group")
	w.BulkString(group)
	if c.Flags&FlagModule != 0 {
		w.BulkString("module")
		w.BulkString(moduleName)
	}
	if d.Complexity != "" {
		w.BulkString("complexity")
		w.BulkString(d.Complexity)
	}
	writeSubcommandDocs(w, c)
}

// writeSubcommandDocs ends a container's docs with its "subcommands" map.
func writeSubcommandDocs(w *resp.Writer, c *Command) {
	if c.Sub == nil {
		return
	}
	subs := sortedSubcommands(c)
	w.BulkString("subcommands")
	w.Map(len(subs))
	for _, s := range subs {
		w.BulkString(s.Name)
		writeCommandDocs(w, s)
	}
}

// moduleName is the module our module-style commands (CL.THROTTLE) claim to
// come from, as redis-cell registers itself.
const moduleName = "redis-cell"

func sortedSubcommands(c *Command) []*Command {
	names := make([]string, 0, len(c.Sub))
	for n := range c.Sub {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*Command, len(names))
	for i, n := range names {
		out[i] = c.Sub[n]
	}
	return out
}

// tipsAllShardsSucceeded is the tip pair of commands a cluster proxy sends
// to every shard and that succeed only if all do (PING, FLUSHALL).
var tipsAllShardsSucceeded = []string{"request_policy:all_shards", "response_policy:all_succeeded"}

// lookupFullName finds a command by its full name in any case: "get" or a
// subcommand as "config|get".
func lookupFullName(name []byte) *Command {
	parent, sub, ok := cutPipe(string(name))
	c := lookupCommand(commands, []byte(parent))
	if !ok || c == nil {
		return c
	}
	if c.Sub == nil {
		return nil
	}
	return lookupCommand(c.Sub, []byte(sub))
}
