package script

import (
	"context"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/resp"
)

// fakeHost answers a few commands the way the server would, enough to
// exercise redis.call's conversions without a keyspace.
type fakeHost struct{ calls [][]string }

func (h *fakeHost) Call(args [][]byte, w *resp.Writer) {
	var s []string
	for _, a := range args {
		s = append(s, string(a))
	}
	h.calls = append(h.calls, s)
	switch strings.ToLower(s[0]) {
	case "ping":
		w.Status("PONG")
	case "echo":
		w.BulkString(s[1])
	case "nil":
		w.Null()
	case "int":
		w.Int(42)
	case "wrongtype":
		w.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	case "double":
		w.Double(1.5)
	case "arr":
		w.Array(3)
		w.Int(1)
		w.Null()
		w.BulkString("x")
	case "map":
		w.Map(1)
		w.BulkString("f")
		w.BulkString("v")
	case "bool":
		w.Bool(true)
	default:
		w.Error("ERR Unknown Redis command called from script")
	}
}

func (h *fakeHost) CommandExists(name []byte) bool { return strings.EqualFold(string(name), "ping") }

var testEngine = NewEngine("7.0.15", nil)

// eval runs body and returns the raw RESP2 (or proto) reply.
func evalProto(t *testing.T, proto int, body string, keys, argv []string) string {
	t.Helper()
	s, err := testEngine.Load([]byte(body))
	if err != nil {
		return "-" + err.Error() + "\r\n"
	}
	w := resp.NewWriter()
	w.SetProto(proto)
	testEngine.Run(context.Background(), s, toBytes(keys), toBytes(argv), &fakeHost{}, w)
	return string(w.Bytes())
}

func eval(t *testing.T, body string, argv ...string) string {
	t.Helper()
	return evalProto(t, 2, body, nil, argv)
}

func toBytes(ss []string) [][]byte {
	var out [][]byte
	for _, s := range ss {
		out = append(out, []byte(s))
	}
	return out
}
