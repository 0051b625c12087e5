package cell

import "github.com/cellserver/cellserver/resp"

// SWAPDB index1 index2: the two databases exchange their keys
// (keyspace.Tx.SwapDB). Clients blocked on keys of either are served by
// what the swap brought them, as Redis's scanDatabaseForReadyKeys does.

func init() {
	register(&Command{Name: "swapdb", Arity: 3, Flags: FlagWrite | FlagFast | flagAllDBs, Handler: swapdb,
		ACL: ACLKeyspace | ACLDangerous,
		Doc: &CommandDoc{"Swaps two Redis databases", "4.0.0", "server", "O(N) where N is the count of clients watching or blocking on keys from both databases."}})
}

// swapdb checks as Redis's swapdbCommand: cluster mode, each index an
// int (its own error), then both in range.
func swapdb(x *Ctx) {
	if x.srv.clusterOn {
		x.Error(ErrSwapdbCluster)
		return
	}
	a, ok := resp.ParseInt(x.Args[1])
	if !ok || a != int64(int32(a)) {
		x.Error(ErrSwapdbFirst)
		return
	}
	b, ok := resp.ParseInt(x.Args[2])
	if !ok || b != int64(int32(b)) {
		x.Error(ErrSwapdbSecond)
		return
	}
	n := int64(x.srv.ks.DBs())
	if a < 0 || a >= n || b < 0 || b >= n {
		x.Error(ErrDBIndex)
		return
	}
	x.SwapDB(int(a), int(b))
	x.srv.blockers.readyIn(x.Ready(), int(a), int(b))
	x.W.OK()
}
