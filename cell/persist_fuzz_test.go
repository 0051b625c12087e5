package cell

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzPersistRestart runs random command sequences on a server with
// persistence, stops it as a crash would (no final checkpoint: the log is
// replayed), and checks that the restarted server holds exactly the same
// keyspace. Every mutation path reaches the effect log, checkpoints (SAVE,
// BGSAVE in the scripts) meet the log, and replay meets both.
func FuzzPersistRestart(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("ZADD w 1 a 2 b 3 c\nSAVE\nZREM w a\nMULTI\nZREMRANGEBYSCORE w -inf +inf\nZADD w 9 z\nEXEC\nBGSAVE\nZINCRBY w 2 z")
	f.Add("ZADD w 1 a 2 b 3 c 4 d\nMULTI\nZREMRANGEBYSCORE w (1 2\nZADD w 1.5 e\nZREMRANGEBYSCORE w 3.5 (+inf\nEXEC\nZREMRANGEBYSCORE w -inf (1.5")
	f.Add("RPUSH l a b\nHSET h f v\nSAVE\nDEL l\nFLUSHDB\nSET l x\nRENAME l m\nSELECT 2\nZADD z 1 a\nSWAPDB 0 2")
	// Windows whose members are their scores' integers, which the log
	// notes as integers (zsetRec.note): range deletes, pops, -0, 2^53.
	f.Add("ZADD w 10 10 20 20 30 30 -5 -5\nMULTI\nZADD w 40 40\nZREMRANGEBYSCORE w 0 20\nPEXPIRE w 600000\nEXEC\nZPOPMIN w\nZADD w -0 0 9007199254740993 9007199254740993\nZREMRANGEBYSCORE w -1 1\nZREMRANGEBYSCORE w 9007199254740992 9007199254740992")
	// Strings, hashes and lists changed in place, which the log holds as
	// what changed (keyspace/delta_persist.go): patches, fields, list positions,
	// with checkpoints between them and values replaced under them.
	f.Add("SET s 0123456789012345678901234567890123456789012345678901234567890123456789\nAPPEND s abc\nSAVE\nSETRANGE s 100 z\nAPPEND s \"\\x00\"\nPEXPIRE s 600000\nSETRANGE s 2 xy\nOBJECT ENCODING s")
	f.Add("RPUSH l a b c d e\nSAVE\nLPUSH l x y\nRPOP l 2\nLSET l -1 z\nLTRIM l 1 -1\nBGSAVE\nLPOP l\nLINSERT l BEFORE c i\nLREM l 0 z\nRPUSHX l w\nLPUSHX l v")
	f.Add("HSET h a 1 b 2 c 3\nHSET h d 4\nHDEL h a\nSAVE\nHINCRBY h b 5\nHINCRBYFLOAT h c 0.5\nHSETNX h e 5\nHSET h long 01234567890123456789012345678901234567890123456789012345678901234567890\nHDEL h long\nEXPIRE h 1000")
	f.Add("MULTI\nAPPEND s 01234567890123456789012345678901234567890123456789012345678901234567890\nAPPEND s x\nLPUSH l a\nLPOP l\nLPUSH l b\nHSET h f v\nHDEL h f\nHSET h g w\nEXEC\nMULTI\nAPPEND s y\nSETRANGE s 0 q\nRPUSH l c\nLSET l 0 d\nHSET h g x\nEXEC\nDEL l\nRPUSH l e\nRENAME h s")
	mod := func(c *Config) { c.Shards = 2 }
	f.Fuzz(func(t *testing.T, script string) {
		dir := t.TempDir()
		srv, stop := openServer(t, dir, mod)
		runFuzzScript(t, srv, script, nil)
		// Let a BGSAVE the script started end before the stop.
		for srv.bgsave.Load() {
			time.Sleep(time.Millisecond)
		}
		// One cutoff for both dumps: a key expiring at about it (a
		// CL.THROTTLE of a 60 s period) is in both or in neither.
		soon := time.Now().Add(time.Minute).UnixMilli()
		want := lastingKeys(dumpKeyspace(srv), soon)
		crashStop(srv, stop)
		srv, _ = openServer(t, dir, mod)
		if got := lastingKeys(dumpKeyspace(srv), soon); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("script %q: keyspace after restart:\n%s\nwant:\n%s", script, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// lastingKeys drops from a dumpKeyspace listing the keys that expire
// before soon, which may expire between two dumps.
func lastingKeys(keys []string, soon int64) []string {
	out := keys[:0]
	for _, k := range keys {
		i := strings.LastIndexByte(k, '/')
		exp, err := strconv.ParseInt(k[i+1:], 10, 64)
		if err == nil && exp != 0 && exp < soon {
			continue
		}
		out = append(out, k)
	}
	return out
}
