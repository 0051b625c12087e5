package persist

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestEffectsDecode: every op of a record decodes to its effect, in
// order; a record damaged anywhere is refused whole, before any effect.
func TestEffectsDecode(t *testing.T) {
	b := &Batch{}
	b.PutString(3, []byte("k"), 5, []byte("v"))
	b.Put(0, []byte("z"), Value{Kind: KindZSetWide, Exp: 9})
	b.PutMember(0, []byte("z"), []byte("m"), -2.5)
	b.DeleteMember(0, []byte("z"), []byte("n"))
	b.Delete(1, []byte("d"))
	b.DeleteKey(1, []byte("w"))
	b.DeleteDB(7)
	rec := append([]byte(nil), b.wire...)
	var got []string
	var e Effect
	if err := decodeEffects(rec, &e, func(e *Effect) error {
		got = append(got, effectString(e))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{`put 3/"k"=s:5:"v"`, `put 0/"z"=w:9:""`, `zput 0/"z" "m"=-2.5`, `zdel 0/"z" "n"`, `del 1/"d"`, `del 1/"w"`, `flushdb 7`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []struct {
		name string
		rec  []byte
	}{
		{"unknown op", append(append([]byte(nil), rec...), 9)},
		{"cut in the last op", rec[:len(rec)-1]},
		{"length past the end", append(append([]byte(nil), rec...), byte(opDelete), 0x7f)},
		{"key that is not a key", append(append([]byte(nil), rec...), byte(opDelete), 1, 0x05)},
		{"bad value", append(append([]byte(nil), rec...), byte(opSet), 4, nsKey, 0, 1, 'z', 1, 'x')},
		{"bad score", append(append([]byte(nil), rec...), byte(opSet), 5, nsKey, 0, 1, 'z', 'm', 1, 'x')},
	} {
		calls := 0
		err := decodeEffects(bad.rec, &e, func(*Effect) error { calls++; return nil })
		if !errors.Is(err, ErrCorrupt) || calls != 0 {
			t.Errorf("%s: err %v after %d effects, want ErrCorrupt before any", bad.name, err, calls)
		}
	}
}

// TestHeadMemberOps: the log's short member ops (PutHeadMember,
// DeleteHeadMember) decode to the same effects as whole member keys, for
// every kind of member: a window's integer (short form), text, empty, a
// zero byte first, and integers whose text is not canonical or whose score
// differs (long form). They are corrupt without a set's head before them.
func TestHeadMemberOps(t *testing.T) {
	b := &Batch{}
	b.Put(2, []byte("w"), Value{Kind: KindZSetWide, Exp: 9})
	b.PutHeadMember([]byte("1700000000000"), 1700000000000)
	b.DeleteHeadMember([]byte("1699999940000"))
	b.PutHeadMember([]byte("-5"), -5)
	b.PutHeadMember([]byte("m"), 2.5)
	b.PutHeadMember([]byte(""), 1)
	b.PutHeadMember([]byte("\x00x"), 3)
	b.PutHeadMember([]byte("007"), 7)
	b.PutHeadMember([]byte("-0"), 0)
	b.PutHeadMember([]byte("0"), math.Copysign(0, -1))
	b.PutHeadMember([]byte("8"), 9)
	b.PutHeadMember([]byte("-9223372036854775808"), -9223372036854775808)
	b.DeleteHeadMember([]byte(""))
	b.DeleteHeadMember([]byte("9223372036854775808"))
	b.Put(0, []byte("v"), Value{Kind: KindZSetWide})
	b.DeleteHeadMember([]byte("1"))
	want := []string{
		`put 2/"w"=w:9:""`,
		`zput 2/"w" "1700000000000"=1.7e+12`,
		`zdel 2/"w" "1699999940000"`,
		`zput 2/"w" "-5"=-5`,
		`zput 2/"w" "m"=2.5`,
		`zput 2/"w" ""=1`,
		`zput 2/"w" "\x00x"=3`,
		`zput 2/"w" "007"=7`,
		`zput 2/"w" "-0"=0`,
		`zput 2/"w" "0"=-0`,
		`zput 2/"w" "8"=9`,
		`zput 2/"w" "-9223372036854775808"=-9.223372036854776e+18`,
		`zdel 2/"w" ""`,
		`zdel 2/"w" "9223372036854775808"`,
		`put 0/"v"=w:0:""`,
		`zdel 0/"v" "1"`,
	}
	var got []string
	var e Effect
	if err := decodeEffects(b.wire, &e, func(e *Effect) error {
		got = append(got, effectString(e))
		if e.Kind == EffectPutMember && e.Score == 0 && math.Signbit(e.Score) != (string(e.Member) == "0") {
			t.Errorf("member %q: score's sign lost", e.Member)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A window's update is short: its integers are varints, its key is
	// not repeated.
	w := &Batch{}
	w.Put(0, []byte("limit:12345:w1"), Value{Kind: KindZSetWide, Exp: 1_700_000_060_000})
	w.PutHeadMember([]byte("1700000000000"), 1700000000000)
	w.DeleteHeadMember([]byte("1699999940000"))
	if n := w.Size(); n > 45 {
		t.Errorf("a window's update takes %d bytes", n)
	}

	for _, bad := range []struct {
		name string
		fill func(b *Batch)
	}{
		{"no head", func(b *Batch) { b.PutHeadMember([]byte("m"), 1) }},
		{"after a string", func(b *Batch) { b.PutString(0, []byte("k"), 0, []byte("v")); b.DeleteHeadMember([]byte("1")) }},
		{"after a whole set", func(b *Batch) {
			b.Put(0, []byte("z"), Value{Kind: KindZSet, Items: [][]byte{[]byte("a"), enc(1)}})
			b.PutHeadMember([]byte("2"), 2)
		}},
		{"after a delete", func(b *Batch) {
			b.Put(0, []byte("z"), Value{Kind: KindZSetWide})
			b.Delete(0, []byte("y"))
			b.PutHeadMember([]byte("2"), 2)
		}},
	} {
		b := &Batch{}
		bad.fill(b)
		calls := 0
		if err := decodeEffects(b.wire, &e, func(*Effect) error { calls++; return nil }); !errors.Is(err, ErrCorrupt) || calls != 0 {
			t.Errorf("%s: err %v after %d effects, want ErrCorrupt before any", bad.name, err, calls)
		}
	}
	for _, cut := range []struct {
		name string
		rec  []byte
	}{
		{"integer cut", append(append([]byte(nil), b.wire[:len(b.wire)-3]...), byte(opHeadSetInt), 0x80)},
		{"score cut", append(append([]byte(nil), b.wire...), byte(opHeadSet), 1, 'm', 8, 1, 2)},
		{"score of 7 bytes", append(append([]byte(nil), b.wire...), byte(opHeadSet), 1, 'm', 7, 1, 2, 3, 4, 5, 6, 7)},
	} {
		if err := decodeEffects(cut.rec, &e, func(*Effect) error { return nil }); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", cut.name, err)
		}
	}
}

// TestSelfKeyedMember: only a member that strconv.AppendInt gives back
// byte for byte is logged as an integer.
func TestSelfKeyedMember(t *testing.T) {
	for _, tt := range []struct {
		m  string
		ok bool
	}{
		{"0", true}, {"7", true}, {"-7", true}, {"1700000000000", true},
		{"9223372036854775807", true}, {"-9223372036854775808", true},
		{"9223372036854775808", false}, {"-9223372036854775809", false}, {"99999999999999999999", false},
		{"", false}, {"-", false}, {"-0", false}, {"00", false}, {"07", false}, {"+7", false},
		{" 7", false}, {"7 ", false}, {"1e3", false}, {"1.0", false}, {"0x1", false},
	} {
		v, ok := selfKeyedMember([]byte(tt.m))
		if ok != tt.ok || ok && strconv.FormatInt(v, 10) != tt.m {
			t.Errorf("%q: %d %v, want ok %v", tt.m, v, ok, tt.ok)
		}
	}
}

// FuzzDecodeEffects: no log record, however damaged, panics the decoder.
func FuzzDecodeEffects(f *testing.F) {
	b := &Batch{}
	b.PutString(3, []byte("k"), 5, []byte("v"))
	b.Put(0, []byte("z"), Value{Kind: KindZSetWide, Exp: 9})
	b.PutMember(0, []byte("z"), []byte("m"), -2.5)
	b.DeleteDB(7)
	f.Add(append([]byte(nil), b.wire...))
	b.Put(0, []byte("w"), Value{Kind: KindZSetWide, Exp: 9})
	b.PutHeadMember([]byte("1700000000000"), 1700000000000)
	b.DeleteHeadMember([]byte("x"))
	b.PutHeadMember([]byte(""), 2)
	f.Add(b.wire)
	f.Fuzz(func(t *testing.T, rec []byte) {
		var e Effect
		_ = decodeEffects(rec, &e, func(e *Effect) error {
			_ = fmt.Sprint(e.Kind, e.DB, len(e.Key), len(e.Member), e.Value.Kind, e.Score)
			return nil
		})
	})
}

// TestBatchDirectEncoding: the puts that encode straight into the record
// give the bytes of the generic path (AppendKey, AppendValue, add), for
// keys, databases, expiries and integers of every varint length.
func TestBatchDirectEncoding(t *testing.T) {
	keys := [][]byte{{}, []byte("k"), bytes.Repeat([]byte("x"), 127), bytes.Repeat([]byte("y"), 128), bytes.Repeat([]byte("z"), 20000)}
	ints := []int64{0, 1, -1, 63, -64, 64, -65, 1 << 20, math.MaxInt64, math.MinInt64}
	exps := []int64{0, 1, 127, 128, 1_700_000_000_000, math.MaxInt64}
	for _, db := range []int{0, 15, 127, 128, 1 << 20} {
		for _, key := range keys {
			for _, exp := range exps {
				for _, v := range append(ints, exp) {
					for _, val := range []Value{
						{Kind: KindInt, Exp: exp, Int: v},
						{Kind: KindString, Exp: exp, Str: key},
						{Kind: KindZSetWide, Exp: exp},
					} {
						direct, generic := &Batch{}, &Batch{}
						switch val.Kind {
						case KindInt:
							direct.PutInt(db, key, exp, v)
						case KindString:
							direct.PutString(db, key, exp, key)
						default:
							direct.PutZSetHead(db, key, exp)
						}
						direct.Delete(db, key)
						generic.add(opSet, AppendKey(nil, db, key), AppendValue(nil, val))
						generic.add(opDelete, AppendKey(nil, db, key), nil)
						if !bytes.Equal(direct.wire, generic.wire) || direct.n != generic.n {
							t.Fatalf("db %d key %d bytes %+v: %x, want %x", db, len(key), val, direct.wire, generic.wire)
						}
					}
				}
			}
		}
	}
}

// TestDeltaOps: the changes in place of strings, hashes and lists (format
// 5) decode to their effects in order, each belonging to the head before
// it; a change without its head, under another kind's head, or cut short
// is refused whole.
func TestDeltaOps(t *testing.T) {
	b := &Batch{}
	b.PatchString(0, []byte("s"), 7, 12, 10, []byte("xy"))
	b.PatchString(1, []byte("t"), 0, 5, 5, nil)
	b.PutHashHead(2, []byte("h"), 9)
	b.PutHeadField([]byte("f"), []byte("v"))
	b.PutHeadField([]byte(""), []byte("1700000000000")) // not a score: no integer form
	b.DeleteHeadField([]byte("g"))
	b.PutListHead(3, []byte("l"), 0)
	b.ListSpan(-3, 120003)
	b.ListSet(-1, []byte("a"))
	b.ListSet(-3, nil)
	b.PutZSetHead(0, []byte("z"), 0)
	b.PutHeadMember([]byte("m"), 1)
	want := []string{
		`patch 0/"s" exp 7 len 12 at 10="xy"`,
		`patch 1/"t" exp 0 len 5 at 5=""`,
		`put 2/"h"=H:9:""`,
		`hset 2/"h" "f"="v"`,
		`hset 2/"h" ""="1700000000000"`,
		`hdel 2/"h" "g"`,
		`put 3/"l"=L:0:""`,
		`lspan 3/"l" [-3,+120003)`,
		`lset 3/"l" -1="a"`,
		`lset 3/"l" -3=""`,
		`put 0/"z"=w:0:""`,
		`zput 0/"z" "m"=1`,
	}
	var got []string
	var e Effect
	if err := decodeEffects(b.wire, &e, func(e *Effect) error {
		got = append(got, effectString(e))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// An append's record is its bytes and little more.
	a := &Batch{}
	a.PatchString(0, []byte("big"), 0, 50<<20+10, 50<<20, []byte("0123456789"))
	if n := a.Size(); n > 30 {
		t.Errorf("an APPEND of 10 bytes takes %d bytes", n)
	}
	for _, bad := range []struct {
		name string
		fill func(b *Batch)
	}{
		{"field without a head", func(b *Batch) { b.PutHeadField([]byte("f"), []byte("v")) }},
		{"list op without a head", func(b *Batch) { b.ListSpan(0, 1) }},
		{"list op after a hash head", func(b *Batch) { b.PutHashHead(0, []byte("h"), 0); b.ListSet(0, []byte("v")) }},
		{"integer member after a hash head", func(b *Batch) { b.PutHashHead(0, []byte("h"), 0); b.DeleteHeadMemberInt(5) }},
		{"field after a list head", func(b *Batch) { b.PutListHead(0, []byte("l"), 0); b.DeleteHeadField([]byte("f")) }},
		{"list op after a set's head", func(b *Batch) { b.PutZSetHead(0, []byte("z"), 0); b.ListSpan(0, 1) }},
		{"list op after a patch", func(b *Batch) { b.PatchString(0, []byte("s"), 0, 1, 0, []byte("x")); b.ListSpan(0, 1) }},
		{"patch past its length", func(b *Batch) { b.PatchString(0, []byte("s"), 0, 1, 0, []byte("xy")) }},
	} {
		b := &Batch{}
		bad.fill(b)
		calls := 0
		if err := decodeEffects(b.wire, &e, func(*Effect) error { calls++; return nil }); !errors.Is(err, ErrCorrupt) || calls != 0 {
			t.Errorf("%s: err %v after %d effects, want ErrCorrupt before any", bad.name, err, calls)
		}
	}
	for cut := 1; cut < len(b.wire); cut++ {
		// Every cut either ends between ops or is refused; none panics.
		_ = decodeEffects(b.wire[:cut], &e, func(*Effect) error { return nil })
	}
	if _, err := Decode([]byte{byte(KindStrPatch), 0, 1, 0, 'x'}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Decode of a patch: %v, want ErrCorrupt (the log's only)", err)
	}
}
