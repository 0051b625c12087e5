package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"testing"
)

// readAll reads every record of p; size -1 hides the length from the reader.
func readAll(p []byte, size int64) (n int, err error) { return readAllBorrow(p, size, false) }

func readAllBorrow(p []byte, size int64, borrow bool) (n int, err error) {
	r, err := NewReader(bytes.NewReader(p), size)
	if err != nil {
		return 0, err
	}
	r.Borrow = borrow
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if rec.Kind == KindKey {
			n++
		}
	}
}

func writerFile(t testing.TB) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf, "redis-ver", "7.0.15")
	for _, k := range testKeyspace() {
		w.SelectDB(k.db, 0, 0)
		if err := w.Key([]byte(k.key), &k.v, k.expire); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriterReaderRoundTrip(t *testing.T) {
	want := testKeyspace()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, k := range want {
		w.SelectDB(k.db, 1, 0)
		if err := w.Key([]byte(k.key), &k.v, k.expire); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{int64(buf.Len()), -1, -2} {
		r, err := NewReader(bytes.NewReader(buf.Bytes()), max(size, -1))
		if err != nil {
			t.Fatal(err)
		}
		// -2: unknown size, borrowed keys and values, copied here.
		r.Borrow = size == -2
		got := model{}
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Kind == KindKey {
				if r.Borrow {
					rec.Value = cloneValue(rec.Value)
				}
				got.add(rec.DB, string(rec.Key), rec.Value, rec.Expire)
			}
		}
		want.diff(t, fmt.Sprintf("round trip (size %d)", size), got)
	}
}

// TestReaderRejectsDamage: every truncation and every flipped byte of a
// file is an error (the checksum catches what the structure does not),
// never a panic and never a clean end.
func TestReaderRejectsDamage(t *testing.T) {
	p := writerFile(t)
	step := max(1, len(p)/3000)
	for cut := 0; cut < len(p); cut += step {
		for _, size := range []int64{int64(cut), -1} {
			if _, err := readAll(p[:cut], size); err == nil {
				t.Fatalf("file cut at %d of %d read without error", cut, len(p))
			}
		}
	}
	q := append([]byte(nil), p...)
	for i := 0; i < len(q); i += step {
		q[i] ^= 0x5a
		if _, err := readAll(q, int64(len(q))); err == nil {
			t.Fatalf("byte %d flipped: read without error", i)
		}
		q[i] ^= 0x5a
	}
	// A zero checksum is a file written without one, as Redis's rdbchecksum no.
	binary.LittleEndian.PutUint64(q[len(q)-8:], 0)
	if n, err := readAll(q, -1); err != nil || n != len(testKeyspace()) {
		t.Fatalf("zero checksum: %d keys, %v", n, err)
	}
	var e *Error
	if _, err := readAll([]byte("REDIS0012"), -1); !errors.As(err, &e) || e.Offset != 5 {
		t.Errorf("version 12: %v", err)
	}
	if _, err := readAll([]byte("RADIS0010\xff"), -1); err == nil {
		t.Errorf("bad signature accepted")
	}
}

// TestForgedLengthsAllocateLittle: a length field claiming a terabyte
// costs memory only for the bytes actually there, whether or not the
// reader knows the input's size.
func TestForgedLengthsAllocateLittle(t *testing.T) {
	forged := [][]byte{
		// A string of 2^40 bytes.
		append([]byte("REDIS0010\x00\x03key\x81"), 0, 0, 1, 0, 0, 0, 0, 0, 'x'),
		// A list of 2^40 elements.
		append([]byte("REDIS0010\x01\x03key\x81"), 0, 0, 1, 0, 0, 0, 0, 0, 1, 'x'),
		// An LZF string claiming 2^40 bytes uncompressed.
		append([]byte("REDIS0010\x00\x03key\xc3\x02\x81"), 0, 0, 1, 0, 0, 0, 0, 0, 0, 'x'),
	}
	for i, p := range forged {
		for _, size := range []int64{int64(len(p)), -1} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := readAll(p, size)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Errorf("forged %d (size %d): accepted", i, size)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
				t.Errorf("forged %d (size %d): allocated %d bytes", i, size, grew)
			}
		}
	}
}

func TestDecodeDumpRejects(t *testing.T) {
	good, _ := EncodeDump(&Value{Type: TypeList, Elems: bs("a", "b")})
	withTrailer := func(body []byte, ver uint16) []byte {
		p := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), ver)
		return binary.LittleEndian.AppendUint64(p, CRC64(0, p))
	}
	body := good[:len(good)-10]
	cases := []struct {
		name    string
		p       []byte
		trailer bool // refused by the trailer (ErrDumpPayload), not the body
	}{
		{"short", good[:9], true},
		{"version 11", withTrailer(body, 11), true},
		{"bad checksum", append(append([]byte(nil), good[:len(good)-1]...), good[len(good)-1]^1), true},
		{"version 9 accepted body, truncated", withTrailer(body[:len(body)-1], 9), false},
		{"empty list", withTrailer([]byte{typeList, 0}, 10), false},
		{"unknown type", withTrailer([]byte{99, 0}, 10), false},
	}
	for _, c := range cases {
		_, err := DecodeDump(c.p)
		if c.trailer != (err == ErrDumpPayload) || err == nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if v, err := DecodeDump(withTrailer(body, 1)); err != nil || canonical(v) != `list:"a","b"` {
		t.Errorf("older version: %v %v", canonical(v), err)
	}
}

func TestParseScore(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0", 0, true}, {"-0", math.Copysign(0, -1), true}, {"1732000000000", 1732000000000, true},
		{"-999999999999999", -999999999999999, true}, {"1234567890123456789", 1234567890123456789, true},
		{"1.5", 1.5, true}, {"inf", math.Inf(1), true}, {"-inf", math.Inf(-1), true}, {"1e400", math.Inf(1), true},
		{"-", 0, false}, {"", 0, false}, {"nan", 0, false}, {"12a", 0, false},
	} {
		got, ok := parseScore([]byte(c.in))
		if ok != c.ok || ok && (got != c.want || math.Signbit(got) != math.Signbit(c.want)) {
			t.Errorf("parseScore(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
