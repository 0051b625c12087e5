package keyspace

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestListModel runs random operations on a List and on a plain slice and
// compares them after every step, so the ring buffer's wrap-around, growth
// and shrinking are all exercised against the obvious implementation.
func TestListModel(t *testing.T) {
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 2))
		l := NewList()
		var model []string
		for step := range 4000 {
			v := strconv.Itoa(r.IntN(12))
			n := len(model)
			// Lean towards growth, then towards shrinking, so both happen.
			growing := (step/500)%2 == 0
			switch op := r.IntN(9); {
			case op == 0 || (op == 1 && growing):
				l.PushFront([]byte(v))
				model = slices.Insert(model, 0, v)
			case op == 2 || (op == 3 && growing):
				l.PushBack([]byte(v))
				model = append(model, v)
			case op == 1 || op == 3:
				if n > 0 {
					if got := string(l.PopFront()); got != model[0] {
						t.Fatalf("seed %d step %d: PopFront %q, want %q", seed, step, got, model[0])
					}
					model = model[1:]
				}
				if n > 1 {
					if got := string(l.PopBack()); got != model[len(model)-1] {
						t.Fatalf("seed %d step %d: PopBack %q, want %q", seed, step, got, model[len(model)-1])
					}
					model = model[:len(model)-1]
				}
			case op == 4:
				i := r.IntN(n + 1)
				l.Insert(i, []byte(v))
				model = slices.Insert(model, i, v)
			case op == 5 && n > 0:
				i := r.IntN(n)
				l.Set(i, []byte(v+"s"))
				model[i] = v + "s"
			case op == 6 && (!growing || r.IntN(4) == 0):
				a := r.IntN(n + 1)
				b := a + r.IntN(n-a+1)
				l.Trim(a, b)
				model = slices.Clone(model[a:b])
			case op == 7 || op == 8:
				fromTail, limit := op == 8, r.IntN(3)
				taken := 0
				got, _, _ := l.RemoveIf(fromTail, func(x []byte) bool {
					if string(x) != v || (limit > 0 && taken >= limit) {
						return false
					}
					taken++
					return true
				})
				want := removeModel(model, v, limit, fromTail)
				if got != len(model)-len(want) {
					t.Fatalf("seed %d step %d: RemoveIf removed %d, want %d", seed, step, got, len(model)-len(want))
				}
				model = want
			}
			checkList(t, l, model)
		}
	}
}

// removeModel removes up to limit (0: all) copies of v, from the head or
// the tail.
func removeModel(m []string, v string, limit int, fromTail bool) []string {
	out := slices.Clone(m)
	removed := 0
	if !fromTail {
		for i := 0; i < len(out); {
			if out[i] == v && (limit == 0 || removed < limit) {
				out = slices.Delete(out, i, i+1)
				removed++
				continue
			}
			i++
		}
		return out
	}
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] == v && (limit == 0 || removed < limit) {
			out = slices.Delete(out, i, i+1)
			removed++
		}
	}
	return out
}

func checkList(t *testing.T, l *List, model []string) {
	t.Helper()
	if l.Len() != len(model) {
		t.Fatalf("Len %d, model %d", l.Len(), len(model))
	}
	for i, want := range model {
		if got := string(l.At(i)); got != want {
			t.Fatalf("At(%d) = %q, want %q (model %v)", i, got, want, model)
		}
	}
	// Unused slots hold nothing, so popped values can be collected.
	live := 0
	for _, v := range l.buf {
		if v != nil {
			live++
		}
	}
	if live > l.Len() {
		t.Fatalf("%d non-nil slots for %d elements", live, l.Len())
	}
	if len(l.buf)&(len(l.buf)-1) != 0 {
		t.Fatalf("buffer size %d is not a power of two", len(l.buf))
	}
}

func TestListShrinks(t *testing.T) {
	l := NewList()
	for i := range 10000 {
		l.PushBack([]byte(strconv.Itoa(i)))
	}
	for l.Len() > 3 {
		l.PopFront()
	}
	if len(l.buf) > 64 {
		t.Fatalf("3 elements in a buffer of %d", len(l.buf))
	}
	if l.TypeName() != "list" || l.Encoding() != "quicklist" {
		t.Fatal(l.TypeName(), l.Encoding())
	}
}

func TestListValuesAreCopies(t *testing.T) {
	l := NewList()
	v := []byte("abc")
	l.PushBack(v)
	l.PushFront(v)
	l.Insert(1, v)
	v[0] = 'X'
	for i := range l.Len() {
		if !bytes.Equal(l.At(i), []byte("abc")) {
			t.Fatalf("At(%d) = %q", i, l.At(i))
		}
	}
}
