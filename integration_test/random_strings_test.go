package integration_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestStringKeysRandom sends the same pseudo-random sequence of string and
// key commands to both servers. Times are absolute (EXAT, PXAT, EXPIREAT)
// or far away, so that the replies cannot depend on which millisecond each
// server saw.
func TestStringKeysRandom(t *testing.T) {
	c := newPair(t)
	r := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c", binKey, "n"}
	vals := []string{"0", "1", "-1", "10", "9223372036854775807", "-9223372036854775808", "1.5", "abc", "", "0x10",
		"  1", "1e3", binVal, "99999999999999999999", "3.0e3", "007"}
	key := func() string { return keys[r.IntN(len(keys))] }
	val := func() string { return vals[r.IntN(len(vals))] }
	num := func() string { return strconv.Itoa(r.IntN(200) - 100) }
	future := func() string { return strconv.Itoa(4102444800 + r.IntN(1000)) }
	gens := []func() []string{
		func() []string { return []string{"SET", key(), val()} },
		func() []string {
			return []string{"SET", key(), val(), []string{"NX", "XX", "GET", "KEEPTTL"}[r.IntN(4)]}
		},
		func() []string { return []string{"SET", key(), val(), "EXAT", future(), "GET"} },
		func() []string { return []string{"GET", key()} },
		func() []string { return []string{"GETSET", key(), val()} },
		func() []string { return []string{"GETDEL", key()} },
		func() []string { return []string{"GETEX", key(), "PERSIST"} },
		func() []string { return []string{"GETEX", key(), "EXAT", future()} },
		func() []string { return []string{"MSET", key(), val(), key(), val()} },
		func() []string { return []string{"MSETNX", key(), val(), key(), val()} },
		func() []string { return []string{"MGET", key(), key(), key()} },
		func() []string { return []string{"INCR", key()} },
		func() []string { return []string{"DECRBY", key(), num()} },
		func() []string { return []string{"INCRBY", key(), val()} },
		func() []string { return []string{"INCRBYFLOAT", key(), val()} },
		func() []string { return []string{"INCRBYFLOAT", key(), num() + "." + num()} },
		func() []string { return []string{"APPEND", key(), val()} },
		func() []string { return []string{"STRLEN", key()} },
		func() []string { return []string{"GETRANGE", key(), num(), num()} },
		func() []string { return []string{"SETRANGE", key(), strconv.Itoa(r.IntN(20)), val()} },
		func() []string { return []string{"DEL", key(), key()} },
		func() []string { return []string{"EXISTS", key(), key()} },
		func() []string { return []string{"TYPE", key()} },
		func() []string { return []string{"RENAME", key(), key()} },
		func() []string { return []string{"RENAMENX", key(), key()} },
		func() []string {
			return []string{"EXPIREAT", key(), future(), []string{"NX", "XX", "GT", "LT", "XX"}[r.IntN(5)]}
		},
		func() []string { return []string{"PEXPIREAT", key(), future() + "000", "GT"} },
		func() []string { return []string{"EXPIRETIME", key()} },
		func() []string { return []string{"PEXPIRETIME", key()} },
		func() []string { return []string{"PERSIST", key()} },
		func() []string { return []string{"OBJECT", "ENCODING", key()} },
		func() []string { return []string{"EXPIRE", key(), "-1"} },
	}
	for range 3000 {
		c.Do(gens[r.IntN(len(gens))]()...)
	}
	c.DoSorted("KEYS", "*")
}
