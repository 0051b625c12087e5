package cell

import "strings"

// FUNCTION, for a server that has no functions: FLUSH succeeds, LIST is
// empty, STATS shows the Lua engine idle, DELETE finds no library and KILL
// no running function. Loading functions is not supported, so LOAD, DUMP
// and RESTORE are not registered (unknown subcommand).

func init() {
	doc := func(summary, complexity string) *CommandDoc {
		return &CommandDoc{summary, "7.0.0", "scripting", complexity}
	}
	register(
		&Command{Name: "function", Arity: -2, Handler: func(*Ctx) {},
			Doc: doc("A container for function commands", "Depends on subcommand.")},
		&Command{Name: "function|flush", Arity: -2, Flags: FlagWrite | FlagNoScript, Handler: functionFlush,
			ACL: ACLScripting, Tips: tipsAllShardsSucceeded,
			Doc: doc("Deleting all functions", "O(N) where N is the number of functions deleted")},
		&Command{Name: "function|list", Arity: -2, Flags: FlagNoScript, Handler: functionList,
			ACL: ACLScripting, Tips: []string{"nondeterministic_output_order"},
			Doc: doc("List information about all the functions", "O(N) where N is the number of functions")},
		&Command{Name: "function|stats", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Handler: functionStats,
			ACL: ACLScripting, Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
			Doc: doc("Return information about the function currently running (name, description, duration)", "O(1)")},
		&Command{Name: "function|delete", Arity: 3, Flags: FlagWrite | FlagNoScript, Handler: func(x *Ctx) { x.Error(ErrLibraryNotFound) },
			ACL: ACLScripting, Tips: tipsAllShardsSucceeded,
			Doc: doc("Delete a function by name", "O(1)")},
		&Command{Name: "function|kill", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Handler: functionKill,
			ACL: ACLScripting, Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"},
			Doc: doc("Kill the function currently in execution.", "O(1)")},
		&Command{Name: "function|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: functionHelp,
			ACL: ACLScripting, Doc: doc("Show helpful text about the different subcommands", "O(1)")},
	)
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
	x.W.OK()
}

// functionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: always
// empty, after Redis's argument checks.
// Each option may be given once.
func functionList(x *Ctx) {
	withCode, libName := false, false
	for i := 2; i < len(x.Args); i++ {
		switch a := strings.ToLower(string(x.Args[i])); {
		case a == "withcode" && !withCode:
			withCode = true
		case a == "libraryname" && !libName:
			if i+1 >= len(x.Args) {
				x.Error(ErrLibraryNameMissing)
				return
			}
			libName = true
			i++
		default:
			x.Error(errFunctionArg(cstring(x.Args[i])))
			return
		}
	}
	x.W.Array(0)
}

// functionStats is FUNCTION STATS with no script running and no libraries.
func functionStats(x *Ctx) {
	x.W.Map(2)
	x.W.BulkString("running_script")
	x.W.Null()
	x.W.BulkString("engines")
	x.W.Map(1)
	x.W.BulkString("LUA")
	x.W.Map(2)
	x.W.BulkString("libraries_count")
	x.W.Int(0)
	x.W.BulkString("functions_count")
	x.W.Int(0)
}

// functionHelp lists the subcommands served: LOAD, DUMP and RESTORE are
// not (see above), so Redis's lines for them are left out.
func functionHelp(x *Ctx) {
	writeHelp(x, "FUNCTION", []string{
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
	})
}
