package cell

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

// TestHashCommands runs the hash commands in-process, table-driven, for
// the replies and errors that matter most.
func TestHashCommands(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	steps := []struct{ args, want string }{
		{"hset h a 1 b 2", ":2\r\n"},
		{"hset h a 1 c 3", ":1\r\n"},
		{"hset h a", "-ERR wrong number of arguments for 'hset' command\r\n"},
		{"hset h a 1 b", "-ERR wrong number of arguments for 'hset' command\r\n"},
		{"hmset h a 1 b", "-ERR wrong number of arguments for 'hmset' command\r\n"},
		{"hgetall h", "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
		{"hget h b", "$1\r\n2\r\n"},
		{"hget h z", "$-1\r\n"},
		{"hmget h a z", "*2\r\n$1\r\n1\r\n$-1\r\n"},
		{"hsetnx h a 9", ":0\r\n"},
		{"hsetnx h d 4", ":1\r\n"},
		{"hlen h", ":4\r\n"},
		{"hstrlen h d", ":1\r\n"},
		{"hexists h d", ":1\r\n"},
		{"hincrby h a 10", ":11\r\n"},
		{"hincrby h a x", "-ERR value is not an integer or out of range\r\n"},
		{"hincrby h a 9223372036854775807", "-ERR increment or decrement would overflow\r\n"},
		{"hincrbyfloat h a 0.5", "$4\r\n11.5\r\n"},
		{"hincrby h a 1", "-ERR hash value is not an integer\r\n"},
		{"hset h s abc", ":1\r\n"},
		{"hincrbyfloat h s 1", "-ERR hash value is not a float\r\n"},
		{"hincrbyfloat h s inf", "-ERR value is NaN or Infinity\r\n"},
		{"hincrbyfloat h n 1e-3", "$5\r\n0.001\r\n"},
		{"hdel h a b c d s n", ":6\r\n"},
		{"hlen h", ":0\r\n"},
		{"dbsize", ":0\r\n"},
		{"hrandfield h", "$-1\r\n"},
		{"hrandfield h 3", "*0\r\n"},
		{"hrandfield h -9223372036854775808", "-" + ErrCountRange + "\r\n"},
		{"hrandfield h 1 withvalue", "-ERR syntax error\r\n"},
		{"hrandfield h 4611686018427387904 withvalues", "-ERR value is out of range\r\n"},
		{"hset one f v", ":1\r\n"},
		{"hrandfield one -2 WITHVALUES", "*4\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		{"hrandfield one -100000000", "-" + ErrReplyTooLarge + "\r\n"},
		{"rpush l a", ":1\r\n"},
		{"hget l a", "-" + ErrWrongType + "\r\n"},
		{"hincrby l a x", "-ERR value is not an integer or out of range\r\n"},
	}
	for _, s := range steps {
		if got := c.do(strings.Fields(s.args)...); got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
}

// TestHashKeepsTTL checks that in-place changes keep the key's expiry and
// that a new hash has none.
func TestHashKeepsTTL(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("hset", "h", "a", "1", "b", "2")
	entry := func() *Entry {
		s := srv.ks.shardOf(0, []byte("h"))
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.keys.getS("h")
	}
	exp := int64(1) << 50
	s := srv.ks.shardOf(0, []byte("h"))
	s.mu.Lock()
	s.setExp(s.keys.getS("h"), exp)
	s.mu.Unlock()
	for _, cmd := range [][]string{
		{"hset", "h", "c", "3"}, {"hdel", "h", "a"}, {"hincrby", "h", "b", "1"},
		{"hincrbyfloat", "h", "b", "1.5"}, {"hsetnx", "h", "d", "4"}, {"hmset", "h", "e", "5"},
	} {
		c.do(cmd...)
		if e := entry(); e == nil || e.Exp != exp {
			t.Fatalf("after %v: entry %+v", cmd, e)
		}
	}
	c.do("hdel", "h", "b", "c", "d", "e")
	if e := entry(); e != nil {
		t.Fatalf("empty hash still stored: %+v", e)
	}
	c.do("hset", "h", "a", "1")
	if e := entry(); e == nil || e.Exp != 0 {
		t.Fatalf("new hash: %+v", e)
	}
}
