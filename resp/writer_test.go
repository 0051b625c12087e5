package resp

import (
	"math"
	"strconv"
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
		{"push", func(w *Writer) { w.Push(3) }, "*3\r\n", ">3\r\n"},
		{"push 12", func(w *Writer) { w.Push(12) }, "*12\r\n", ">12\r\n"},
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

// BenchmarkWriterThrottleReply is CL.THROTTLE's reply: an array of five
// integers, most of them small.
func BenchmarkWriterThrottleReply(b *testing.B) {
	w := NewWriter()
	for b.Loop() {
		w.Array(5)
		for _, v := range [5]int64{0, 1000001, 999999, -1, 0} {
			w.Int(v)
		}
		w.Reset()
	}
}

// TestWriterIntRange checks Int and the headers against strconv around
// the boundaries of their formatting.
func TestWriterIntRange(t *testing.T) {
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1000, -10, -9, -1, 0, 1, 9, 10, 99, 100, 1 << 40, math.MaxInt64}
	for p := int64(10); p <= 1e10; p *= 10 {
		vals = append(vals, p-1, p, p+1, p*5, p*10-1)
	}
	for v := int64(0); v < 100_000; v += 37 {
		vals = append(vals, v)
	}
	for _, v := range vals {
		w := NewWriter()
		w.Int(v)
		if want := ":" + strconv.FormatInt(v, 10) + "\r\n"; string(w.buf) != want {
			t.Errorf("Int(%d) = %q, want %q", v, w.buf, want)
		}
		if v >= -1 && v <= math.MaxInt32 {
			w := NewWriter()
			w.Array(int(v))
			if want := "*" + strconv.FormatInt(v, 10) + "\r\n"; string(w.buf) != want {
				t.Errorf("Array(%d) = %q, want %q", v, w.buf, want)
			}
		}
	}
}

// TestWriterOneInt: OneInt gives the number exactly when the buffer holds
// one integer reply that Int wrote, and nothing else.
func TestWriterOneInt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w *Writer)
		want  int64 // -1: none
	}{
		{"int", func(w *Writer) { w.Int(59321) }, 59321},
		{"small", func(w *Writer) { w.Int(7) }, 7},
		{"negative", func(w *Writer) { w.Int(-2) }, -2},
		{"empty", func(w *Writer) {}, -1},
		{"error", func(w *Writer) { w.Error("ERR x") }, -1},
		{"raw int", func(w *Writer) { w.Raw([]byte(":5\r\n")) }, -1},
		{"in an array", func(w *Writer) { w.Array(1); w.Int(5) }, -1},
		{"two", func(w *Writer) { w.Int(5); w.Int(6) }, -1},
		{"then more", func(w *Writer) { w.Int(5); w.OK() }, -1},
		{"reset", func(w *Writer) { w.Int(5); w.Reset(); w.Raw([]byte(":6\r\n")) }, -1},
		{"truncated", func(w *Writer) { w.Int(5); w.Truncate(0); w.Raw([]byte(":6\r\n")) }, -1},
		{"truncated after", func(w *Writer) { w.Int(5); w.OK(); w.Truncate(4) }, 5},
		{"reset then int", func(w *Writer) { w.OK(); w.Reset(); w.Int(8) }, 8},
	} {
		w := NewWriter()
		tc.write(w)
		v, ok := w.OneInt()
		if ok != (tc.want != -1) || ok && v != tc.want {
			t.Errorf("%s: OneInt %d %v, want %d", tc.name, v, ok, tc.want)
		}
	}
}
