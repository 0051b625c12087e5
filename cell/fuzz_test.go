package cell

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/gcra"
	"github.com/cellserver/cellserver/resp"
)

// fuzzSeeds are command scripts that reach every command family and its
// option and error paths; FuzzCommands and FuzzPersistRestart start
// from them.
var fuzzSeeds = []string{
	"SET k v\nGET k\nINCR k",
	"SET n 10 EX 100\nINCRBY n 5\nTTL n\nPEXPIRE n 0 NX",
	"MULTI\nSET a 1\nLPUSH a x\nINCR a\nEXEC",
	"WATCH a b\nSET a 2\nMULTI\nGET a\nEXEC",
	"CL.THROTTLE u 15 30 60\nCL.THROTTLE u 15 30 60 -3\nGET u",
	"HELLO 3\nZADD z 1 a 2 b\nZRANGE z 0 -1 WITHSCORES\nHGETALL h",
	"SELECT 3\nMSET a 1 b 2\nKEYS *\nSCAN 0 MATCH a* COUNT 1\nFLUSHALL",
	"SET \"\\x00\\xff\" \"a\\r\\nb\"\nGETRANGE \"\\x00\\xff\" -100 100\nSETRANGE k 5 x",
	"INCRBYFLOAT f 1e400\nAPPEND f x\nEXPIRE f 9223372036854775807",
	"CONFIG GET *\nINFO all\nCOMMAND INFO get\nCLIENT LIST\nOBJECT ENCODING k",
	// CL.THROTTLE and CL.PROBE: every argument shape of the spec.
	"CL.THROTTLE u 15 30 60\nCL.THROTTLE u 15 30 60\nCL.PROBE u 15 30 60 3\nCL.PROBE u 15 30 60 100",
	"cl.throttle\ncl.throttle k\ncl.throttle k 1 1\ncl.throttle k 1 1 1 1 1\ncl.probe\ncl.probe k 1 1 1 1 1",
	"CL.THROTTLE k x 1 1\nCL.THROTTLE k 1 \"\" 1\nCL.THROTTLE k 1 1 \"a\\r\\nb\"\nCL.THROTTLE k \"12\\x0034\" 1 1\nCL.THROTTLE k 1.5 0x1 1e3\nCL.PROBE k \" 1\" 1 1",
	"CL.THROTTLE k 1 0 1\nCL.THROTTLE k 1 1 0\nCL.THROTTLE k 1 2000000000 1\nCL.PROBE k 1 0 1",
	"CL.THROTTLE m1 -1 1 1\nCL.THROTTLE m1 -1 1 1 0\nCL.THROTTLE m3 4 -1 1\nCL.THROTTLE neg 1 1 1 -5\nCL.PROBE neg 1 1 1\nCL.THROTTLE neg 1 1 1",
	"CL.THROTTLE mx 9223372036854775807 1 1\nCL.THROTTLE big6 0 1 31536000\nCL.THROTTLE y 0 1 9223372036\nCL.PROBE y 0 1 9223372036\nCL.THROTTLE w -9223372036854775808 1 9223372036854775807 -9223372036854775808",
	"CL.THROTTLE +p +4 +1 +1 +1\nCL.THROTTLE lz 004 01 01\nCL.THROTTLE us 10 2000000 1\nCL.THROTTLE x 6000 6000 1\nCL.THROTTLE peek 4 1 1 0\nCL.PROBE peek 4 1 1 0",
	"MULTI\nCL.THROTTLE tx 1 1 60\nCL.THROTTLE tx 1 x 60\nCL.PROBE tx 1 1 60\nEXEC\nWATCH tx\nCL.PROBE tx 1 1 60\nMULTI\nCL.THROTTLE tx 1 1 60\nEXEC",
	"SET a 1 PX 5 GET\nGETEX a PXAT 1\nRENAME a b\nRENAMENX b b\nSCAN -1 TYPE string MATCH [^a-\\]*\nOBJECT FREQ b\nRANDOMKEY",
	// Sorted sets: every command, option and error path.
	"ZADD z NX XX 1 a\nZADD z GT LT 1 a\nZADD z INCR 1 a 2 b\nZADD z CH GT 1 a 2 b\nZADD z INCR +inf a\nZADD z INCR -inf a\nZINCRBY z -0 m\nZADD z 1e400 x\nZADD z 0x10 h",
	"ZADD w 1700000000000 1700000000000\nZADD w 1700000000001 1700000000001\nZREMRANGEBYSCORE w 0 1700000000000\nZCARD w\nEXPIRE w 2\nMULTI\nZADD w 1 \"\\x00\\xff\"\nZRANGE w 0 -1 WITHSCORES\nEXEC",
	"ZADD e 1 \"\" 2 a\nZADD e 3 \"\"\nZADD e 4 \"\\x00\"\nZREM e \"\"\nZADD e 5 007 -9 -9\nZINCRBY e 1 \"\"",
	"ZADD l 0 a 0 b 0 c\nZRANGEBYLEX l - +\nZREVRANGEBYLEX l + (a LIMIT 0 1\nZLEXCOUNT l [a (c\nZREMRANGEBYLEX l \"\" +\nZRANGE l ( + BYLEX REV WITHSCORES",
	"ZADD z 1 a 2 b 3 c\nZRANGE z 0 -1 BYSCORE LIMIT -1 -1\nZRANGE z +inf -inf BYSCORE REV LIMIT 0 9223372036854775807 WITHSCORES\nZRANGEBYSCORE z \"(\" \" 1\"\nZRANGE z -9223372036854775808 9223372036854775807\nZREMRANGEBYRANK z -9223372036854775808 0",
	"HELLO 3\nZADD z 1 a 2 b\nZPOPMIN z\nZPOPMAX z 5\nZPOPMIN z -1\nZRANDMEMBER z -9223372036854775807 WITHSCORES\nZRANDMEMBER z -3 WITHSCORES\nZRANDMEMBER z 9223372036854775807\nZMSCORE z a b",
	"ZADD a 1 x 2 y\nZADD b 3 y\nZUNIONSTORE d 2 a b WEIGHTS 1 inf AGGREGATE MAX\nZINTER 2 a b WITHSCORES\nZDIFF 2 a nokey\nZINTERCARD 2 a b LIMIT 1\nZMPOP 2 nokey a MAX COUNT 5\nZMPOP 9223372036854775807 a MIN\nZUNION -1 a\nZSCAN b 0 MATCH [ COUNT 1\nZSCAN b -1",
	"CONFIG SET zset-max-listpack-entries 0\nZADD e 1 a\nOBJECT ENCODING e\nZRANGESTORE e e 0 -1\nZRANGESTORE d nokey 0 -1 BYLEX\nZRANK e a\nZREVRANK e a\nZCOUNT e -inf +inf\nCONFIG SET zset-max-listpack-entries 128",
	"CONFIG SET slowlog-log-slower-than 0 latency-monitor-threshold 1\nSET \"a\\x00\" b\nSLOWLOG GET -1\nSLOWLOG GET 1 2\nLATENCY HISTOGRAM\nLATENCY HISTOGRAM get config\nLATENCY DOCTOR\nLATENCY GRAPH command\nLATENCY HISTORY command\nLATENCY RESET x\nSLOWLOG RESET\nCONFIG SET slowlog-log-slower-than 10000 latency-monitor-threshold 0",
	// Bitmaps and SORT.
	"SETBIT b 7 1\nSETBIT b -1 1\nGETBIT b 4294967295\nBITCOUNT b 0 -1 BIT\nBITPOS b 0 2 -3 BIT\nBITOP XOR d b nokey\nBITFIELD b OVERFLOW FAIL INCRBY i5 #3 99 GET u63 1\nBITFIELD_RO b SET u8 0 1",
	"RPUSH l 3 1 x\nSORT l\nSORT l ALPHA DESC LIMIT 1 -1\nSET w_1 2\nSORT l BY w_* GET # GET w_*->f STORE d\nSORT_RO l BY nosort LIMIT -9223372036854775808 9223372036854775807\nSADD s 2 1\nSORT s BY nosort",
	"MSETNX x 1 y 2\nSETRANGE x 3 abc\nGETRANGE x -9223372036854775808 -1\nINCRBYFLOAT y 0x1p-16445\nEXPIRE y 5 GT LT\nEXPIRETIME y\nKEYS *[\nGETDEL x",
}

// FuzzCommands feeds random command sequences (inline syntax, one command
// per line, so quotes and \x escapes reach binary arguments) to dispatch.
// No input may panic, and every reply must be well-formed RESP.
func FuzzCommands(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	srv := New(fuzzConfig())
	f.Fuzz(func(t *testing.T, script string) {
		runFuzzScript(t, srv, script, func(args [][]byte, reply []byte, line string) {
			if cmd := lookupCommand(commands, args[0]); cmd != nil && (cmd.Name == "cl.throttle" || cmd.Name == "cl.probe") {
				checkThrottleReply(t, string(reply), line)
			}
		})
	})
}

// runFuzzScript dispatches each line of script on a fresh connection to
// srv, checks that every reply is well-formed RESP, and hands it to check.
// Lines that act on connections or the network rather than data, and
// random-pick counts whose legitimate replies are huge, are skipped.
func runFuzzScript(t *testing.T, srv *Server, script string, check func(args [][]byte, reply []byte, line string)) {
	c, peer := pipeClient(srv)
	defer peer.Close()
	defer c.close()
	for _, line := range strings.Split(script, "\n") {
		args, ok := resp.SplitArgs([]byte(line), nil)
		if !ok || len(args) == 0 {
			continue
		}
		if cmd := lookupCommand(commands, args[0]); cmd != nil && (cmd.Name == "quit" || cmd.Name == "client" || cmd.Name == "monitor" || cmd.Name == "migrate" || cmd.Name == "shutdown") {
			continue
		}
		if hugeRandomCount(args) {
			continue
		}
		c.dispatch(args)
		checkRESP(t, c.w.Bytes(), line)
		if check != nil {
			check(args, c.w.Bytes(), line)
		}
		c.w.Reset()
	}
}

func fuzzConfig() Config {
	cfg := DefaultConfig()
	cfg.Shards = 4
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

// pipeClient is a client whose connection is one end of a pipe: dispatch
// can run without a network.
func pipeClient(srv *Server) (*Client, net.Conn) {
	a, b := net.Pipe()
	c := newClient(srv, a)
	srv.addClient(c)
	return c, b
}

// checkRESP fails unless out is a sequence of complete RESP replies.
func checkRESP(t *testing.T, out []byte, cmd string) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(out))
	for {
		if _, err := br.Peek(1); err != nil {
			return
		}
		var sb strings.Builder
		if err := readReply(br, &sb); err != nil {
			t.Fatalf("%q: malformed reply %q: %v", cmd, out, err)
		}
		reply := sb.String()
		switch reply[0] {
		case '+', '-', ':', '$', '*', '%', '~', ',', '_', '#', '=', '(':
		default:
			t.Fatalf("%q: unknown reply type in %q", cmd, reply)
		}
	}
}

// throttleReply is the only array CL.THROTTLE and CL.PROBE reply: five
// integers, the first 0 or 1.
var throttleReply = regexp.MustCompile(`^\*5\r\n:[01]\r\n(:-?[0-9]+\r\n){4}$`)

// checkThrottleReply fails unless out is a reply the spec allows for
// CL.THROTTLE or CL.PROBE: the five integers, one of the spec's Cell
// errors, or a reply of dispatch itself (QUEUED, an ERR or other code).
func checkThrottleReply(t *testing.T, out, cmd string) {
	t.Helper()
	switch {
	case strings.HasPrefix(out, "*"):
		if !throttleReply.MatchString(out) {
			t.Fatalf("%q: reply %q is not five integers", cmd, out)
		}
	case strings.HasPrefix(out, "-Cell error: "):
		msg := strings.TrimSuffix(out[1:], "\r\n")
		switch {
		case msg == gcra.MsgUsage, msg == MsgProbeUsage, msg == gcra.MsgZeroRate,
			msg == gcra.MsgExpire, msg == gcra.MsgInvalidDigit:
		case strings.HasPrefix(msg, gcra.MsgParsePrefix) && !strings.ContainsAny(msg, "\r\n\x00"):
		default:
			t.Fatalf("%q: unknown Cell error %q", cmd, out)
		}
	}
}

// hugeRandomCount reports a ZRANDMEMBER or HRANDFIELD whose count asks for
// more than 10,000 picks. Such replies are legitimate (up to hundreds of
// megabytes, as in Redis) but one of them takes the fuzzer's worker
// seconds and most of its memory, which it reports as a hang.
func hugeRandomCount(args [][]byte) bool {
	cmd := lookupCommand(commands, args[0])
	if cmd == nil || (cmd.Name != "zrandmember" && cmd.Name != "hrandfield") || len(args) < 3 {
		return false
	}
	n, ok := resp.ParseInt(args[2])
	return ok && (n > 10000 || n < -10000)
}
