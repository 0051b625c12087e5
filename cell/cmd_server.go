package cell

import (
	"strings"
	"time"
)

// Server commands over whole databases. INFO, CONFIG, CLIENT and COMMAND
// have files of their own.

func init() {
	register(
		&Command{Name: "dbsize", Arity: 1, Flags: FlagReadonly | FlagFast | flagWholeDB, Handler: dbsize,
			ACL: ACLKeyspace, Tips: []string{"request_policy:all_shards", "response_policy:agg_sum"},
			Doc: &CommandDoc{"Return the number of keys in the selected database", "1.0.0", "server", "O(1)"}},
		&Command{Name: "flushdb", Arity: -1, Flags: FlagWrite | flagWholeDB, Handler: flushdb,
			ACL: ACLKeyspace | ACLDangerous, Tips: tipsAllShardsSucceeded,
			Doc: &CommandDoc{"Remove all keys from the current database", "1.0.0", "server", "O(N) where N is the number of keys in the selected database"}},
		&Command{Name: "flushall", Arity: -1, Flags: FlagWrite | flagAllDBs, Handler: flushall,
			ACL: ACLKeyspace | ACLDangerous, Tips: tipsAllShardsSucceeded,
			Doc: &CommandDoc{"Remove all keys from all databases", "1.0.0", "server", "O(N) where N is the total number of keys in all databases"}},
		&Command{Name: "time", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: timeCmd,
			Tips: []string{"nondeterministic_output"},
			Doc:  &CommandDoc{"Return the current server time", "2.6.0", "server", "O(1)"}},
	)
}

// dbsize counts the keys of the selected database. As in Redis, keys past
// their expiry that no one has reaped yet still count.
func dbsize(x *Ctx) {
	x.W.Int(int64(x.srv.ks.DBSize(x.DB())))
}

// flushMode accepts FLUSHDB/FLUSHALL's optional ASYNC or SYNC. Both empty
// the database before replying here: freeing is the Go collector's job.
func flushMode(x *Ctx) bool {
	if len(x.Args) == 1 {
		return true
	}
	if len(x.Args) == 2 && (strings.EqualFold(string(x.Args[1]), "async") || strings.EqualFold(string(x.Args[1]), "sync")) {
		return true
	}
	x.Error(ErrSyntax)
	return false
}

func flushdb(x *Ctx) {
	if !flushMode(x) {
		return
	}
	x.FlushDB(x.DB())
	x.W.OK()
}

func flushall(x *Ctx) {
	if !flushMode(x) {
		return
	}
	for d := range x.srv.ks.DBs() {
		x.FlushDB(d)
	}
	x.W.OK()
}

// timeCmd is TIME: seconds and microseconds as two bulk strings, the
// microseconds not zero-padded. A test that set the limiter clock
// (limiterState.fixedNow) reads that instant, so that scripts reading TIME
// decide at it too.
func timeCmd(x *Ctx) {
	ns := x.srv.limiters.fixedNow.Load()
	if ns == 0 {
		ns = time.Now().UnixNano()
	}
	x.W.Array(2)
	x.W.BulkInt(ns / int64(time.Second))
	x.W.BulkInt(ns % int64(time.Second) / int64(time.Microsecond))
}
