package persist

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestKeyRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		db     int
		key    []byte
		member []byte
	}{
		{"plain", 0, []byte("user:42"), nil},
		{"empty key", 3, []byte{}, nil},
		{"binary key", 15, []byte{0, 0xff, '\r', '\n', 1}, nil},
		{"big db", 1 << 20, []byte("k"), nil},
		{"member", 2, []byte("window"), []byte("1700000000000-1")},
		{"empty member", 2, []byte("z"), []byte{}},
		{"member with a zero byte first", 2, []byte("z"), []byte("\x00m")},
		{"member that is a zero byte", 2, []byte("z"), []byte("\x00")},
		{"long key", 7, bytes.Repeat([]byte("x"), 300), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := AppendKey(nil, tt.db, tt.key)
			if tt.member != nil {
				k = AppendMemberKey(nil, k, tt.member)
			}
			db, key, suffix, err := DecodeKey(k)
			if err != nil {
				t.Fatal(err)
			}
			if (len(suffix) != 0) != (tt.member != nil) {
				t.Fatalf("suffix %q: a member's key must have one, a head's none", suffix)
			}
			if db != tt.db || !bytes.Equal(key, tt.key) || tt.member != nil && !bytes.Equal(MemberOf(suffix), tt.member) {
				t.Fatalf("got db %d key %q member %q", db, key, MemberOf(suffix))
			}
			if !bytes.HasPrefix(k, AppendDBPrefix(nil, tt.db)) {
				t.Fatal("key record outside its db's prefix")
			}
		})
	}
}

// TestKeyPrefixFree: one key's records never fall inside another key's
// range-delete span, or another db's.
func TestKeyPrefixFree(t *testing.T) {
	keys := [][]byte{[]byte("a"), []byte("ab"), []byte(""), []byte("a\x00"), bytes.Repeat([]byte("a"), 128), bytes.Repeat([]byte("a"), 129)}
	for _, db := range []int{0, 1, 127, 128} {
		for _, a := range keys {
			head := AppendKey(nil, db, a)
			end := PrefixEnd(head)
			for _, db2 := range []int{0, 1, 127, 128} {
				for _, b := range keys {
					if db == db2 && bytes.Equal(a, b) {
						continue
					}
					other := AppendMemberKey(nil, AppendKey(nil, db2, b), []byte("m"))
					if bytes.Compare(other, head) >= 0 && bytes.Compare(other, end) < 0 {
						t.Fatalf("db %d key %q: record of db %d key %q falls in its span", db, a, db2, b)
					}
				}
			}
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ in, want []byte }{
		{[]byte{1, 2}, []byte{1, 3}},
		{[]byte{1, 0xff}, []byte{2}},
		{[]byte{1, 0xff, 0xff}, []byte{2}},
	}
	for _, tt := range tests {
		if got := PrefixEnd(tt.in); !bytes.Equal(got, tt.want) {
			t.Errorf("PrefixEnd(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValueRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		v    Value
	}{
		{"string", Value{Kind: KindString, Str: []byte("hello")}},
		{"empty string", Value{Kind: KindString, Str: []byte{}}},
		{"string with ttl", Value{Kind: KindString, Exp: 1_900_000_000_123, Str: []byte("1700000000000000000")}},
		{"binary string", Value{Kind: KindString, Str: []byte{0, 1, 0xff, '\n'}}},
		{"list", Value{Kind: KindList, Items: [][]byte{[]byte("a"), {}, []byte("ccc")}}},
		{"empty list", Value{Kind: KindList, Items: [][]byte{}}},
		{"list at a position", Value{Kind: KindList, Exp: 4, Pos: -120000, Items: [][]byte{[]byte("a"), []byte("b")}}},
		{"list at a position after the head", Value{Kind: KindList, Pos: 7, Items: [][]byte{[]byte("a")}}},
		{"hash head", Value{Kind: KindHashHead, Exp: 5}},
		{"list head", Value{Kind: KindListHead}},
		{"hash", Value{Kind: KindHash, Exp: 5, Items: [][]byte{[]byte("f"), []byte("v"), []byte("g"), {}}}},
		{"zset head", Value{Kind: KindZSetWide, Exp: 9}},
		{"int", Value{Kind: KindInt, Exp: 7, Int: 1700000000000000000}},
		{"negative int", Value{Kind: KindInt, Int: math.MinInt64}},
		{"zset", Value{Kind: KindZSet, Exp: 9, Items: [][]byte{[]byte("m"), enc(1.5), {}, enc(-2)}}},
		{"window", Value{Kind: KindZSetInts, Exp: 3, Str: func() []byte {
			var w ZSetInts
			b := w.Head(nil, 3, 2)
			return w.Add(w.Add(b, 1700000000001), 1700000000002)[2:] // what follows the kind and expiry (1 byte each)
		}()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendValue(nil, tt.v)
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.v) {
				t.Fatalf("got %+v, want %+v", got, tt.v)
			}
			if tt.v.Kind == KindString && !bytes.Equal(AppendString(nil, tt.v.Exp, tt.v.Str), b) {
				t.Fatal("AppendString and AppendValue differ")
			}
			if tt.v.Kind == KindInt && !bytes.Equal(AppendInt(nil, tt.v.Exp, tt.v.Int), b) {
				t.Fatal("AppendInt and AppendValue differ")
			}
		})
	}
}

// TestZSetInts: a window of integers comes back as the same integers.
func TestZSetInts(t *testing.T) {
	ints := []int64{math.MinInt64, -5, 0, 1700000000000, 1700000000001, math.MaxInt64}
	var w ZSetInts
	b := w.Head(nil, 42, len(ints))
	for _, v := range ints {
		b = w.Add(b, v)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var back []int64
	if got.Kind != KindZSetInts || got.Exp != 42 || EachZSetInt(got.Str, func(v int64) { back = append(back, v) }) != nil || !reflect.DeepEqual(back, ints) {
		t.Fatalf("got %+v, integers %v, want %v", got, back, ints)
	}
	if len(b) > 2+len(ints)*10+4 {
		t.Fatalf("%d bytes for %d integers", len(b), len(ints))
	}
	for _, bad := range []struct {
		name string
		b    []byte
	}{
		{"not ascending", w.Add(w.Add(w.Head(nil, 0, 2), 5), 5)},
		{"descending", w.Add(w.Add(w.Head(nil, 0, 2), 5), 4)},
		{"count beyond input", w.Head(nil, 0, 3)},
		{"trailing bytes", append(w.Add(w.Head(nil, 0, 1), 5), 0)},
		{"overflow", append(w.Add(w.Head(nil, 0, 2), math.MaxInt64), 2)},
	} {
		if _, err := Decode(bad.b); err != ErrCorrupt {
			t.Errorf("%s: %v, want ErrCorrupt", bad.name, err)
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good := AppendValue(nil, Value{Kind: KindHash, Items: [][]byte{[]byte("f"), []byte("v")}})
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"unknown kind", []byte{'?', 0}},
		{"no expiry", []byte{'s'}},
		{"overlong expiry", []byte{'s', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"truncated hash", good[:len(good)-1]},
		{"trailing bytes", append(append([]byte(nil), good...), 'x')},
		{"count beyond input", []byte{'l', 0, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"odd hash", AppendValue(nil, Value{Kind: KindList, Items: [][]byte{[]byte("f")}})},
		{"item beyond input", []byte{'l', 0, 1, 5, 'a'}},
		{"zset head with payload", []byte{'w', 0, 1}},
		{"int without a value", []byte{'i', 0}},
		{"int with trailing bytes", []byte{'i', 0, 2, 0}},
		{"int cut mid-varint", []byte{'i', 0, 0x80}},
		{"zset score of 7 bytes", AppendValue(nil, Value{Kind: KindZSet, Items: [][]byte{[]byte("m"), make([]byte, 7)}})},
		{"zset odd", AppendValue(nil, Value{Kind: KindZSet, Items: [][]byte{[]byte("m")}})},
	}
	tests[7].b[0] = byte(KindHash)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decode(tt.b); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode(%q) = %v, want ErrCorrupt", tt.b, err)
			}
		})
	}
	for _, k := range [][]byte{nil, {nsMeta, 1}, {nsKey}, {nsKey, 0}, {nsKey, 0, 5, 'a'}, {nsKey, 0xff}} {
		if _, _, _, err := DecodeKey(k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeKey(%v) = %v, want ErrCorrupt", k, err)
		}
	}
}

func enc(f float64) []byte {
	b := EncodeScore(f)
	return b[:]
}

func TestScore(t *testing.T) {
	for _, f := range []float64{0, -1.5, math.Inf(1), math.Inf(-1), 1700000000000, math.SmallestNonzeroFloat64} {
		b := EncodeScore(f)
		got, err := DecodeScore(b[:])
		if err != nil || got != f {
			t.Fatalf("score %v: got %v, %v", f, got, err)
		}
	}
	if _, err := DecodeScore([]byte{1, 2}); err == nil {
		t.Fatal("short score decoded")
	}
}

// FuzzDecode: whatever the bytes, decoding gives a value or ErrCorrupt,
// never a panic; a decoded value encodes to bytes that decode to it again.
func FuzzDecode(f *testing.F) {
	f.Add(AppendString(nil, 0, []byte("v")))
	f.Add(AppendValue(nil, Value{Kind: KindHash, Exp: 1, Items: [][]byte{[]byte("f"), []byte("v")}}))
	f.Add(AppendValue(nil, Value{Kind: KindList, Items: [][]byte{[]byte("a")}}))
	f.Add(AppendValue(nil, Value{Kind: KindZSetWide}))
	f.Add(AppendValue(nil, Value{Kind: KindZSet, Items: [][]byte{[]byte("m"), enc(1)}}))
	f.Add(AppendKey(nil, 3, []byte("key")))
	f.Add(AppendWindow(nil, 9, []byte{0x80, 0x01, 0x02, 0x05, 0x01})) // runs (128, 2), (133, 1)
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeKey(b)
		v, err := Decode(b)
		// Into a reused array with room for a few items, as Load decodes:
		// the same value or the same error.
		reused, rerr := decodeReusing(b, make([][]byte, 2, 4))
		if (rerr == nil) != (err == nil) || !reflect.DeepEqual(reused, v) {
			t.Fatalf("decodeReusing gave %+v, %v; Decode %+v, %v", reused, rerr, v, err)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, err := Decode(AppendValue(nil, v))
		if err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
		if again.Kind != v.Kind || again.Exp != v.Exp || !bytes.Equal(again.Str, v.Str) || len(again.Items) != len(v.Items) {
			t.Fatalf("round trip changed %+v into %+v", v, again)
		}
	})
}
