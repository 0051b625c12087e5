package keyspace

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestHashModel runs random operations on a Hash and on a plain model (a
// map plus the insertion order) and compares them after each step: the
// contents always, the order while the hash is in the small encoding, and
// the index invariant in the large one.
func TestHashModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		h := NewHash()
		model := map[string]string{}
		var order []string // insertion order, meaningful while small
		nfields := 20 + r.IntN(700)
		for step := range 3000 {
			f := "f" + strconv.Itoa(r.IntN(nfields))
			switch op := r.IntN(10); {
			case op < 6:
				v := strings.Repeat("v", r.IntN(20))
				if r.IntN(200) == 0 {
					v = strings.Repeat("L", 65) // forces the large encoding
				}
				_, had := model[f]
				if added := h.Set([]byte(f), []byte(v)); added == had {
					t.Fatalf("seed %d step %d: Set(%s) added=%v, model had=%v", seed, step, f, added, had)
				}
				if !had {
					order = append(order, f)
				}
				model[f] = v
			default:
				_, had := model[f]
				if got := h.Delete([]byte(f)); got != had {
					t.Fatalf("seed %d step %d: Delete(%s)=%v, want %v", seed, step, f, got, had)
				}
				delete(model, f)
				for i, o := range order {
					if o == f {
						order = append(order[:i], order[i+1:]...)
						break
					}
				}
			}
			checkHash(t, h, model, order)
		}
	}
}

func checkHash(t *testing.T, h *Hash, model map[string]string, order []string) {
	t.Helper()
	if h.Len() != len(model) {
		t.Fatalf("Len %d, model %d", h.Len(), len(model))
	}
	if h.Encoding() == "listpack" {
		if len(model) > hashMaxListpackEntries {
			t.Fatalf("listpack with %d fields", len(model))
		}
		for i, f := range order {
			if got, _ := h.At(i); got != f {
				t.Fatalf("order: position %d is %q, want %q", i, got, f)
			}
		}
	} else {
		for i := 0; i < h.Len(); i++ {
			if f, _ := h.At(i); h.index[f] != i {
				t.Fatalf("index[%q] = %d, want %d", f, h.index[f], i)
			}
		}
		if len(h.index) != h.Len() {
			t.Fatalf("index has %d entries for %d fields", len(h.index), h.Len())
		}
	}
	for f, v := range model {
		got, ok := h.Get([]byte(f))
		if !ok || string(got) != v {
			t.Fatalf("Get(%q) = %q, %v; want %q", f, got, ok, v)
		}
	}
}

func TestHashEncodingLimits(t *testing.T) {
	h := NewHash()
	for i := range hashMaxListpackEntries {
		h.Set([]byte(strconv.Itoa(i)), []byte(strings.Repeat("x", hashMaxListpackValue)))
	}
	if h.Encoding() != "listpack" {
		t.Fatalf("512 fields of 64 bytes: %s", h.Encoding())
	}
	h.Set([]byte("0"), []byte("updated")) // an update does not grow it
	if h.Encoding() != "listpack" {
		t.Fatalf("after an update: %s", h.Encoding())
	}
	h.Set([]byte(strings.Repeat("f", hashMaxListpackValue)), nil)
	if h.Encoding() != "hashtable" {
		t.Fatalf("513 fields: %s", h.Encoding())
	}
	h = NewHash()
	h.Set([]byte("a"), []byte("1"))
	h.Set([]byte("a"), []byte(strings.Repeat("x", hashMaxListpackValue+1)))
	if h.Encoding() != "hashtable" {
		t.Fatalf("a 65-byte value: %s", h.Encoding())
	}
	h.Delete([]byte("a"))
	h.Set([]byte("b"), nil)
	if h.Encoding() != "hashtable" {
		t.Fatal("a hash table converted back")
	}
	if h.TypeName() != "hash" {
		t.Fatal(h.TypeName())
	}
}

// TestHashValuesAreCopies checks that stored values never alias the
// request buffer they came from.
func TestHashValuesAreCopies(t *testing.T) {
	h := NewHash()
	f, v := []byte("field"), []byte("value")
	h.Set(f, v)
	f[0], v[0] = 'X', 'X'
	got, ok := h.Get([]byte("field"))
	if !ok || !bytes.Equal(got, []byte("value")) {
		t.Fatalf("got %q %v", got, ok)
	}
}

// TestHashClone: a copy keeps the encoding (a large hash shrunk to a few
// fields stays large), the fields in their order, and is independent of
// the original.
func TestHashClone(t *testing.T) {
	for _, n := range []int{3, hashMaxListpackEntries + 1} {
		h := NewHash()
		for i := range n {
			h.Set([]byte("f"+strconv.Itoa(i)), []byte("v"))
		}
		for i := 3; i < n; i++ {
			h.Delete([]byte("f" + strconv.Itoa(i)))
		}
		c := h.Clone()
		if c.Encoding() != h.Encoding() || c.Len() != h.Len() {
			t.Fatalf("%d fields: clone %s of %d, original %s of %d", n, c.Encoding(), c.Len(), h.Encoding(), h.Len())
		}
		for i := range h.pairs {
			if c.pairs[i].field != h.pairs[i].field || string(c.pairs[i].value) != string(h.pairs[i].value) {
				t.Errorf("pair %d: %q=%q, original %q=%q", i, c.pairs[i].field, c.pairs[i].value, h.pairs[i].field, h.pairs[i].value)
			}
		}
		c.Set([]byte("f0"), []byte("changed"))
		c.Set([]byte("new"), []byte("x"))
		if v, _ := h.Get([]byte("f0")); string(v) != "v" || h.Len() != 3 {
			t.Errorf("the original changed with its clone: f0=%q, %d fields", v, h.Len())
		}
	}
}
