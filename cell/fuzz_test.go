package cell

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/resp"
)

// FuzzCommands feeds random command sequences (inline syntax, one command
// per line, so quotes and \x escapes reach binary arguments) to dispatch.
// No input may panic, and every reply must be well-formed RESP.
func FuzzCommands(f *testing.F) {
	seeds := []string{
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
		"SET a 1 PX 5 GET\nGETEX a PXAT 1\nRENAME a b\nRENAMENX b b\nSCAN -1 TYPE string MATCH [^a-\\]*\nOBJECT FREQ b\nRANDOMKEY",
		"MSETNX x 1 y 2\nSETRANGE x 3 abc\nGETRANGE x -9223372036854775808 -1\nINCRBYFLOAT y 0x1p-16445\nEXPIRE y 5 GT LT\nEXPIRETIME y\nKEYS *[\nGETDEL x",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	srv := New(fuzzConfig())
	f.Fuzz(func(t *testing.T, script string) {
		c, peer := pipeClient(srv)
		defer peer.Close()
		defer c.close()
		for _, line := range strings.Split(script, "\n") {
			args, ok := resp.SplitArgs([]byte(line), nil)
			if !ok || len(args) == 0 {
				continue
			}
			if cmd := lookupCommand(commands, args[0]); cmd != nil && (cmd.Name == "quit" || cmd.Name == "client") {
				continue // these act on connections, not data
			}
			c.dispatch(args)
			checkRESP(t, c.w.Bytes(), line)
			c.w.Reset()
		}
	})
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
