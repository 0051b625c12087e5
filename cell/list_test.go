package cell

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
				got := l.RemoveIf(fromTail, func(x []byte) bool {
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

// TestListCommands runs the list commands in-process for the replies and
// errors that matter most, in both protocols' null forms.
func TestListCommands(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	steps := []struct{ args, want string }{
		{"rpush l a b c", ":3\r\n"},
		{"lpush l z", ":4\r\n"},
		{"lpushx nokey a", ":0\r\n"},
		{"lrange l 0 -1", "*4\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{"lpop l 0", "*0\r\n"},
		{"lpop l -1", "-ERR value is out of range, must be positive\r\n"},
		{"lpop l x", "-ERR value is out of range, must be positive\r\n"},
		{"lpop l 1 2", "-ERR wrong number of arguments for 'lpop' command\r\n"},
		{"rpop l 2", "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"},
		{"lpop nokey 2", "*-1\r\n"},
		{"lpop nokey", "$-1\r\n"},
		{"lindex nokey x", "$-1\r\n"},
		{"lindex l x", "-ERR value is not an integer or out of range\r\n"},
		{"lindex l -1", "$1\r\na\r\n"},
		{"lset nokey x v", "-ERR no such key\r\n"},
		{"lset l 5 v", "-ERR index out of range\r\n"},
		{"lrange nokey x 1", "-ERR value is not an integer or out of range\r\n"},
		{"linsert l middle a b", "-ERR syntax error\r\n"},
		{"linsert l before nosuch b", ":-1\r\n"},
		{"linsert l after a b", ":3\r\n"},
		{"lpos l b", ":2\r\n"},
		{"lpos l b count 0", "*1\r\n:2\r\n"},
		{"lpos l q", "$-1\r\n"},
		{"lpos l a rank 0", "-" + ErrLposRankZero + "\r\n"},
		{"lpos l a count x", "-ERR COUNT can't be negative\r\n"},
		{"lpos l a maxlen -1", "-ERR MAXLEN can't be negative\r\n"},
		{"lpos l a rank", "-ERR syntax error\r\n"},
		{"lrem l 0 a", ":1\r\n"},
		{"ltrim l 5 10", "+OK\r\n"},
		{"llen l", ":0\r\n"},
		{"dbsize", ":0\r\n"},
		{"hset h f v", ":1\r\n"},
		{"lindex h x", "-" + ErrWrongType + "\r\n"},
		{"lrange h x 1", "-ERR value is not an integer or out of range\r\n"},
		{"hello 3", ""},
		{"lpop nokey 2", "_\r\n"},
		{"lpop nokey", "_\r\n"},
		{"lindex nokey 0", "_\r\n"},
	}
	for _, s := range steps {
		got := c.do(strings.Fields(s.args)...)
		if s.want != "" && got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
}

// TestListKeepsTTL checks that in-place changes keep the key's expiry.
func TestListKeepsTTL(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("rpush", "l", "a", "b", "c", "d")
	s := srv.ks.shardOf(0, []byte("l"))
	entry := func() *Entry {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.keys.getS("l")
	}
	exp := int64(1) << 50
	s.mu.Lock()
	s.setExp(s.keys.getS("l"), exp)
	s.mu.Unlock()
	for _, cmd := range []string{
		"rpush l e", "lpush l z", "lpushx l y", "rpushx l x", "lpop l", "rpop l 2",
		"lset l 0 q", "linsert l after q w", "lrem l 1 w", "ltrim l 0 -1",
	} {
		c.do(strings.Fields(cmd)...)
		if e := entry(); e == nil || e.Exp != exp {
			t.Fatalf("after %s: entry %+v", cmd, e)
		}
	}
	c.do("ltrim", "l", "1", "0")
	if e := entry(); e != nil {
		t.Fatalf("empty list still stored: %+v", e)
	}
}
