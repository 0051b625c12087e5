package cell

import (
	"runtime/debug"
	"strings"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// MEMORY: the introspection Redis offers over its allocator, answered from
// the Go runtime. PURGE matters most: the Go heap counts garbage not yet
// collected in used_memory, so a measurement (bench -mem, an operator
// comparing with Redis) runs MEMORY PURGE first to read live bytes only,
// as Redis's own jemalloc purge makes its RSS honest.

func init() {
	register(
		&Command{Name: "memory", Arity: -2},
		&Command{Name: "memory|purge", Arity: 2, Handler: memoryPurge,
			Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			Doc:  &CommandDoc{"Ask the allocator to release memory", "4.0.0", "server", "Depends on how much memory is allocated, could be slow"}},
		&Command{Name: "memory|usage", Arity: -3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Step: 1, Handler: memoryUsage,
			Doc: &CommandDoc{"Estimate the memory usage of a key", "4.0.0", "server", "O(N) where N is the number of samples."}},
		&Command{Name: "memory|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: memoryHelp,
			Doc: &CommandDoc{"Show helpful text about the different subcommands", "4.0.0", "server", "O(1)"}},
	)
}

// memoryPurge collects garbage and returns freed spans to the OS: after it,
// INFO's used_memory is the live heap and RSS drops to what is in use.
func memoryPurge(x *Ctx) {
	debug.FreeOSMemory() // runs a full collection first
	x.W.OK()
}

// memoryUsage is MEMORY USAGE key [SAMPLES count]: the estimate the
// maxmemory accounting uses for the key (map slot, entry, key and value).
// SAMPLES is validated as Redis does and otherwise ignored: the estimate
// is exact by construction, not sampled.
func memoryUsage(x *Ctx) {
	for j := 3; j < len(x.Args); j++ {
		if !strings.EqualFold(string(x.Args[j]), "samples") || j+1 >= len(x.Args) {
			x.Error(ErrSyntax)
			return
		}
		n, ok := resp.ParseInt(x.Args[j+1])
		if !ok {
			x.Error(ErrNotInteger)
			return
		}
		if n < 0 {
			x.Error(ErrSyntax)
			return
		}
		j++
	}
	e := x.Lookup(x.Args[2])
	if e == nil {
		x.W.Null()
		return
	}
	x.W.Int(keyspace.EntrySize(string(x.Args[2]), e))
}

// memoryHelpLines are Redis's lines for the subcommands we have; DOCTOR,
// MALLOC-STATS and STATS describe jemalloc and are left out.
var memoryHelpLines = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Prints this help.",
}

func memoryHelp(x *Ctx) {
	x.W.Array(len(memoryHelpLines))
	for _, l := range memoryHelpLines {
		x.W.Status(l)
	}
}
