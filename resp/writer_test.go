package resp

import (
	"math"
	"testing"
)

func TestWriter(t *testing.T) {
	tests := []struct {
		name  string
		write func(w *Writer)
		resp2 string
		resp3 string
	}{
		{"status", func(w *Writer) { w.Status("OK") }, "+OK\r\n", "+OK\r\n"},
		{"status crlf", func(w *Writer) { w.Status("a\r\nb") }, "+a  b\r\n", "+a  b\r\n"},
		{"error crlf", func(w *Writer) { w.Error("ERR x\ny") }, "-ERR x y\r\n", "-ERR x y\r\n"},
		{"int", func(w *Writer) { w.Int(-42) }, ":-42\r\n", ":-42\r\n"},
		{"bulk", func(w *Writer) { w.Bulk([]byte("a\x00b")) }, "$3\r\na\x00b\r\n", "$3\r\na\x00b\r\n"},
		{"empty bulk", func(w *Writer) { w.Bulk(nil) }, "$0\r\n\r\n", "$0\r\n\r\n"},
		{"null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
		{"map", func(w *Writer) { w.Map(2) }, "*4\r\n", "%2\r\n"},
		{"set", func(w *Writer) { w.Set(3) }, "*3\r\n", "~3\r\n"},
		{"double", func(w *Writer) { w.Double(1.5) }, "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"double 0.1", func(w *Writer) { w.Double(0.1) }, "$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"},
		{"double inf", func(w *Writer) { w.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"double ms", func(w *Writer) { w.Double(1700000000000) }, "$13\r\n1700000000000\r\n", ",1700000000000\r\n"},
		{"bool", func(w *Writer) { w.Bool(true) }, ":1\r\n", "#t\r\n"},
		{"verbatim", func(w *Writer) { w.Verbatim("a:b") }, "$3\r\na:b\r\n", "=7\r\ntxt:a:b\r\n"},
	}
	for _, tc := range tests {
		for proto, want := range map[int]string{2: tc.resp2, 3: tc.resp3} {
			w := NewWriter()
			w.SetProto(proto)
			tc.write(w)
			if got := string(w.Bytes()); got != want {
				t.Errorf("%s RESP%d: got %q, want %q", tc.name, proto, got, want)
			}
		}
	}
}
