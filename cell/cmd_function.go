package cell

import (
	"bytes"
	"strings"
	"time"

	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/rdb"
)

// Functions: FUNCTION LOAD and the rest of the FUNCTION family, FCALL and
// FCALL_RO. The libraries live in srv.functions (functions.go); the Lua
// side (loading a library, calling a function) is package script's. A
// function runs as an EVAL script does (runCallable): on its declared
// shards once known to stay within them, else holding every shard.

func init() {
	doc := func(summary, complexity string) *CommandDoc {
		return &CommandDoc{summary, "7.0.0", "scripting", complexity}
	}
	const fcallFlags = FlagNoScript | FlagSkipMonitor | FlagMayReplicate | FlagNoMandatoryKeys | FlagStale | FlagMovableKeys | flagScript
	register(
		&Command{Name: "function", Arity: -2, Handler: func(*Ctx) {},
			Doc: doc("A container for function commands", "Depends on subcommand.")},
		&Command{Name: "function|load", Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagNoScript, Handler: functionLoad,
			ACL: ACLScripting, Doc: doc("Create a function with the given arguments (name, code, description)", "O(1) (considering compilation time is redundant)")},
		&Command{Name: "function|flush", Arity: -2, Flags: FlagWrite | FlagNoScript, Handler: functionFlush,
			ACL: ACLScripting, Tips: tipsAllShardsSucceeded,
			Doc: doc("Deleting all functions", "O(N) where N is the number of functions deleted")},
		&Command{Name: "function|list", Arity: -2, Flags: FlagNoScript, Handler: functionList,
			ACL: ACLScripting, Tips: []string{"nondeterministic_output_order"},
			Doc: doc("List information about all the functions", "O(N) where N is the number of functions")},
		&Command{Name: "function|stats", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Handler: functionStats,
			ACL: ACLScripting, Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
			Doc: doc("Return information about the function currently running (name, description, duration)", "O(1)")},
		&Command{Name: "function|delete", Arity: 3, Flags: FlagWrite | FlagNoScript, Handler: functionDelete,
			ACL: ACLScripting, Tips: tipsAllShardsSucceeded,
			Doc: doc("Delete a function by name", "O(1)")},
		&Command{Name: "function|dump", Arity: 2, Flags: FlagNoScript, Handler: functionDump,
			ACL: ACLScripting, Doc: doc("Dump all functions into a serialized binary payload", "O(N) where N is the number of functions")},
		&Command{Name: "function|restore", Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagNoScript, Handler: functionRestore,
			ACL: ACLScripting, Doc: doc("Restore all the functions on the given payload", "O(N) where N is the number of functions on the payload")},
		&Command{Name: "function|kill", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Handler: functionKill,
			ACL: ACLScripting, Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"},
			Doc: doc("Kill the function currently in execution.", "O(1)")},
		&Command{Name: "function|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: functionHelp,
			ACL: ACLScripting, Doc: doc("Show helpful text about the different subcommands", "O(1)")},
		&Command{Name: "fcall", Arity: -3, Flags: fcallFlags, Keys: evalKeys, Handler: fcall, ACL: ACLScripting,
			Doc: doc("Invoke a function", "Depends on the function that is executed.")},
		&Command{Name: "fcall_ro", Arity: -3, Flags: fcallFlags&^FlagMayReplicate | FlagReadonly, Keys: evalKeys, Handler: fcallRO, ACL: ACLScripting,
			Doc: doc("Invoke a read-only function", "Depends on the function that is executed.")},
	)
}

func fcall(x *Ctx)   { fcallGeneric(x, false) }
func fcallRO(x *Ctx) { fcallGeneric(x, true) }

// fcallGeneric checks in Redis's order: the function, numkeys, then its
// flags against FCALL_RO.
func fcallGeneric(x *Ctx, ro bool) {
	if x.srv.obs.monitors.count.Load() > 0 {
		x.cl.feedMonitorsAs(x.cmd, x.Args, x.DB(), "")
	}
	f := x.srv.functions.lookup(x.Args[1])
	if f == nil {
		x.Error(ErrFunctionNotFound)
		return
	}
	n, ok := scriptNumKeys(x, ErrFunctionNumKeys)
	if !ok {
		return
	}
	noWrites := f.Flags&script.FlagNoWrites != 0
	if !scriptPrepare(x, f.Flags, ro) { // script_flags.go
		return
	}
	x.srv.waitLibraries(x) // functions_persist.go
	runCallable(x, callable{fn: f, notes: &f.Notes}, ro || noWrites, x.Args[3:3+n], x.Args[3+n:])
}

// functionLoad is FUNCTION LOAD [REPLACE] code.
func functionLoad(x *Ctx) {
	replace := false
	i := 2
	for ; i < len(x.Args)-1; i++ {
		if !strings.EqualFold(string(x.Args[i]), "replace") {
			x.Error("ERR Unknown option given: " + cstring(x.Args[i]))
			return
		}
		replace = true
	}
	lib, err := x.srv.scripts.LoadLibrary(x.Args[i])
	if err != nil {
		x.Error(err.Error())
		return
	}
	f := &x.srv.functions
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	if msg := f.add([]*script.Library{lib}, replace, true); msg != "" {
		x.Error(msg)
		return
	}
	x.srv.scripts.LibrariesChanged()
	x.srv.functionsChanged(x, func(b *persist.Batch) { b.PutLibrary([]byte(lib.Name), lib.Code) })
	x.W.BulkString(lib.Name)
}

// functionDelete is FUNCTION DELETE library.
func functionDelete(x *Ctx) {
	f := &x.srv.functions
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	if !f.remove(string(x.Args[2])) {
		x.Error(ErrLibraryNotFound)
		return
	}
	x.srv.scripts.LibrariesChanged()
	x.srv.functionsChanged(x, func(b *persist.Batch) { b.DeleteLibrary(x.Args[2]) })
	x.W.OK()
}

// functionDump is FUNCTION DUMP: the libraries' code in Redis's payload.
func functionDump(x *Ctx) {
	libs := x.srv.functions.list()
	codes := make([][]byte, len(libs))
	for i, l := range libs {
		codes[i] = l.Code
	}
	x.W.Bulk(rdb.EncodeFunctionsDump(codes))
}

// functionRestore is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func functionRestore(x *Ctx) {
	if len(x.Args) > 4 {
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	policy := "append"
	if len(x.Args) == 4 {
		policy = strings.ToLower(string(x.Args[3]))
		if policy != "append" && policy != "replace" && policy != "flush" {
			x.Error(ErrRestorePolicy)
			return
		}
	}
	codes, err := rdb.DecodeFunctionsDump(x.Args[2])
	switch {
	case err == rdb.ErrDumpPayload:
		x.Error(ErrDumpPayload)
		return
	case err == rdb.ErrNotFunction:
		x.Error("ERR " + err.Error())
		return
	case err != nil:
		x.Error(ErrFunctionsPayload)
		return
	}
	libs := make([]*script.Library, 0, len(codes))
	seen := map[string]bool{}
	for _, code := range codes {
		lib, err := x.srv.scripts.LoadLibrary(code)
		if err != nil {
			x.Error(err.Error())
			return
		}
		if seen[lib.Name] {
			x.Error("ERR Library '" + lib.Name + "' already exists")
			return
		}
		seen[lib.Name] = true
		libs = append(libs, lib)
	}
	f := &x.srv.functions
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	var msg string
	if policy == "flush" {
		msg = f.replaceAll(libs)
	} else {
		msg = f.add(libs, policy == "replace", false)
	}
	if msg != "" {
		x.Error(msg)
		return
	}
	x.srv.scripts.LibrariesChanged()
	x.srv.functionsChanged(x, func(b *persist.Batch) {
		if policy == "flush" {
			b.DeleteLibraries()
		}
		for _, l := range libs {
			b.PutLibrary([]byte(l.Name), l.Code)
		}
	})
	x.W.OK()
}

// functionFlush is FUNCTION FLUSH [ASYNC|SYNC].
func functionFlush(x *Ctx) {
	if len(x.Args) > 3 {
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	if len(x.Args) == 3 {
		m := strings.ToLower(string(x.Args[2]))
		if m != "async" && m != "sync" {
			x.Error(ErrFunctionFlushMode)
			return
		}
	}
	x.srv.flushFunctions(x)
	x.W.OK()
}

// functionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE], each
// option at most once. Libraries come ordered by name (Redis's order is
// its dictionary's).
func functionList(x *Ctx) {
	withCode := false
	var pattern []byte
	for i := 2; i < len(x.Args); i++ {
		switch a := strings.ToLower(string(x.Args[i])); {
		case a == "withcode" && !withCode:
			withCode = true
		case a == "libraryname" && pattern == nil:
			if i+1 >= len(x.Args) {
				x.Error(ErrLibraryNameMissing)
				return
			}
			i++
			pattern = x.Args[i]
		default:
			x.Error(errFunctionArg(cstring(x.Args[i])))
			return
		}
	}
	libs := x.srv.functions.list()
	if pattern != nil {
		out := libs[:0]
		for _, l := range libs {
			if globMatchFold(pattern, []byte(l.Name)) {
				out = append(out, l)
			}
		}
		libs = out
	}
	x.W.Array(len(libs))
	for _, l := range libs {
		fields := 3
		if withCode {
			fields = 4
		}
		x.W.Map(fields)
		x.W.BulkString("library_name")
		x.W.BulkString(l.Name)
		x.W.BulkString("engine")
		x.W.BulkString("LUA")
		x.W.BulkString("functions")
		x.W.Array(len(l.Funcs))
		for _, f := range l.Funcs {
			x.W.Map(3)
			x.W.BulkString("name")
			x.W.BulkString(f.Name)
			x.W.BulkString("description")
			if f.HasDesc {
				x.W.BulkString(f.Desc)
			} else {
				x.W.Null()
			}
			x.W.BulkString("flags")
			n := 0
			for _, fl := range script.FlagNames {
				if f.Flags&fl.Flag != 0 {
					n++
				}
			}
			x.W.Set(n)
			for _, fl := range script.FlagNames {
				if f.Flags&fl.Flag != 0 {
					x.W.Status(fl.Name)
				}
			}
		}
		if withCode {
			x.W.BulkString("library_code")
			x.W.Bulk(l.Code)
		}
	}
}

// functionStats is FUNCTION STATS. running_script describes a function
// past busy-reply-threshold: before that, Redis runs nothing beside it,
// so could not answer while it runs. An EVAL script past it gets BUSY,
// as in Redis.
func functionStats(x *Ctx) {
	var name string
	var command [][]byte
	var since time.Time
	fn := x.srv.busyRun(func(r *scriptRun) bool { return r.fn != nil }, func(r *scriptRun) {
		name, since = r.fn.Name, r.start
		for _, a := range r.x.Args {
			command = append(command, bytes.Clone(a))
		}
	})
	if !fn && x.srv.busyScripts.Load() > 0 {
		x.Error(ErrBusy)
		return
	}
	libs, funcs := x.srv.functions.counts()
	x.W.Map(2)
	x.W.BulkString("running_script")
	if fn {
		x.W.Map(3)
		x.W.BulkString("name")
		x.W.BulkString(name)
		x.W.BulkString("command")
		x.W.Array(len(command))
		for _, a := range command {
			x.W.Bulk(a)
		}
		x.W.BulkString("duration_ms")
		x.W.Int(time.Since(since).Milliseconds())
	} else {
		x.W.Null()
	}
	x.W.BulkString("engines")
	x.W.Map(1)
	x.W.BulkString("LUA")
	x.W.Map(2)
	x.W.BulkString("libraries_count")
	x.W.Int(int64(libs))
	x.W.BulkString("functions_count")
	x.W.Int(int64(funcs))
}

// functionHelp is Redis's FUNCTION HELP.
func functionHelp(x *Ctx) {
	writeHelp(x, "FUNCTION", []string{
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	})
}
