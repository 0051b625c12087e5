package cell

import (
	"testing"

	"github.com/cellserver/cellserver/cell/keyspace"
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
	for d := range srv.ks.DBs() {
		srv.ks.Each(d, func(k string, e *keyspace.Entry) {
			var n = -1
			switch v := e.Obj().(type) {
			case *keyspace.Hash:
				n = v.Len()
			case *keyspace.List:
				n = v.Len()
			}
			if n == 0 {
				t.Errorf("%q left an empty %s at %q", line, e.Type(), k)
			}
		})
	}
}
