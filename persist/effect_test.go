package persist

import (
	"errors"
	"fmt"
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

// FuzzDecodeEffects: no log record, however damaged, panics the decoder.
func FuzzDecodeEffects(f *testing.F) {
	b := &Batch{}
	b.PutString(3, []byte("k"), 5, []byte("v"))
	b.Put(0, []byte("z"), Value{Kind: KindZSetWide, Exp: 9})
	b.PutMember(0, []byte("z"), []byte("m"), -2.5)
	b.DeleteDB(7)
	f.Add(b.wire)
	f.Fuzz(func(t *testing.T, rec []byte) {
		var e Effect
		_ = decodeEffects(rec, &e, func(e *Effect) error {
			_ = fmt.Sprint(e.Kind, e.DB, len(e.Key), len(e.Member), e.Value.Kind, e.Score)
			return nil
		})
	})
}
