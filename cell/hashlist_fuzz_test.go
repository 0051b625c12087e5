package cell

import (
	"testing"
)

// FuzzHashList feeds random sequences of hash and list commands to
// dispatch. No input may panic, every reply must be well-formed RESP, and
// no empty hash or list may ever be left in the keyspace.
func FuzzHashList(f *testing.F) {
	for _, s := range []string{
		"HSET h a 1 b 2\nHDEL h a b\nHGETALL h\nHRANDFIELD h -3 WITHVALUES",
		"HINCRBYFLOAT h f 1e4932\nHINCRBYFLOAT h f 1e4932\nHINCRBY h f 1\nHSTRLEN h f",
		"HSET h f 0x10\nHINCRBYFLOAT h f \"1\\x00x\"\nHRANDFIELD h 9223372036854775807 WITHVALUES",
		"RPUSH l a b c\nLPOP l 2\nRPOP l 5\nLPOS l a RANK -9223372036854775808 COUNT 2",
		"LPUSH l x y\nLTRIM l 5 1\nLRANGE l -9223372036854775808 9223372036854775807\nLREM l -9223372036854775808 x",
		"RPUSH l a\nLINSERT l BEFORE a b\nLSET l -1 z\nLINDEX l -2\nHSET l f v",
		"HELLO 3\nHGETALL h\nLPOP nokey 1\nHRANDFIELD h 3 WITHVALUES\nMULTI\nRPUSH l a\nEXEC",
	} {
		f.Add(s)
	}
	srv := New(fuzzConfig())
	f.Fuzz(func(t *testing.T, script string) {
		runFuzzScript(t, srv, script, func(_ [][]byte, _ []byte, line string) {
			checkNoEmptyAggregates(t, srv, line)
		})
	})
}

// checkNoEmptyAggregates fails if any database holds an empty hash or list.
func checkNoEmptyAggregates(t *testing.T, srv *Server, line string) {
	t.Helper()
	for d := range srv.ks.dbs {
		for i := range srv.ks.dbs[d].shards {
			s := &srv.ks.dbs[d].shards[i]
			s.mu.Lock()
			for k, e := range s.keys.all() {
				var n = -1
				switch v := e.obj().(type) {
				case *Hash:
					n = v.Len()
				case *List:
					n = v.Len()
				}
				if n == 0 {
					s.mu.Unlock()
					t.Fatalf("%q left an empty %s at %q", line, e.Type(), k)
				}
			}
			s.mu.Unlock()
		}
	}
}
