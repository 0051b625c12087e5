package integration_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Bitmaps on strings: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD
// and BITFIELD_RO, their errors and their check order, against
// redis-server.

func TestBitmapSetGetBit(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SETBIT", "b", "7", "1")
		c.Do("GET", "b")
		c.Do("SETBIT", "b", "7", "1")
		c.Do("SETBIT", "b", "7", "0")
		c.Do("SETBIT", "b", "100", "1")
		c.Do("STRLEN", "b")
		c.Do("GET", "b")
		c.Do("OBJECT", "ENCODING", "b")
		for _, off := range []string{"0", "7", "100", "101", "1000000", "4294967295"} {
			c.Do("GETBIT", "b", off)
			c.Do("GETBIT", "missing", off)
		}
		c.Do("SET", "n", "12345")
		c.Do("GETBIT", "n", "2")
		c.Do("GETBIT", "n", "3")
		c.Do("GETBIT", "n", "39")
		c.Do("SETBIT", "n", "6", "1")
		c.Do("GET", "n")
		c.Do("OBJECT", "ENCODING", "n")
		c.Do("SET", "e", "abc")
		c.Do("SETBIT", "e", "0", "0")
		c.Do("OBJECT", "ENCODING", "e")
		c.Do("SET", "t", "x", "EX", "100")
		c.Do("SETBIT", "t", "30", "1")
		c.Do("TTL", "t")
		for _, bad := range [][]string{
			{"SETBIT", "b", "-1", "1"}, {"SETBIT", "b", "x", "1"}, {"SETBIT", "b", "4294967296", "1"},
			{"SETBIT", "b", "99999999999999999999", "1"}, {"SETBIT", "b", "1.5", "1"},
			{"SETBIT", "b", "1", "2"}, {"SETBIT", "b", "1", "-1"}, {"SETBIT", "b", "1", "x"},
			{"SETBIT", "b", "-1", "x"}, {"SETBIT", "b", "#1", "1"},
			{"GETBIT", "b", "-1"}, {"GETBIT", "b", "4294967296"}, {"GETBIT", "b", "x"},
			{"SETBIT", "b", "1"}, {"GETBIT", "b"}, {"GETBIT", "b", "1", "2"},
		} {
			c.Error(bad...)
		}
		if c.makeList("l") {
			c.Error("SETBIT", "l", "1", "1")
			c.Error("GETBIT", "l", "1")
			c.Error("SETBIT", "l", "-1", "1") // the offset is checked first
			c.Do("LRANGE", "l", "0", "-1")
		}
		c.Do("GET", "b")
	})
}

func TestBitmapBitcount(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "s", "foobar\xff\x00\x81")
		c.Do("SET", "n", "-1234567")
		for _, k := range []string{"s", "n", "missing"} {
			c.Do("BITCOUNT", k)
			for _, r := range [][2]string{{"0", "0"}, {"1", "1"}, {"0", "-1"}, {"-2", "-1"}, {"-1", "-2"},
				{"5", "2"}, {"-100", "100"}, {"100", "200"}, {"-3", "-100"}, {"1", "-100"}} {
				c.Do("BITCOUNT", k, r[0], r[1])
				c.Do("BITCOUNT", k, r[0], r[1], "BYTE")
				c.Do("BITCOUNT", k, r[0], r[1], "bit")
			}
			for _, r := range [][2]string{{"5", "30"}, {"3", "3"}, {"7", "8"}, {"-13", "-3"}, {"9", "70"}, {"63", "100"}} {
				c.Do("BITCOUNT", k, r[0], r[1], "BIT")
			}
		}
		c.Do("BITCOUNT", "missing", "x")           // 7.0 looks the key up first
		c.Do("BITCOUNT", "missing", "0", "1", "X") //
		c.Do("BITCOUNT", "s", "-1", "-2", "X")     // the empty range answers before the unit
		c.Error("BITCOUNT", "s", "0")
		c.Error("BITCOUNT", "s", "0", "1", "2", "3")
		c.Error("BITCOUNT", "s", "a", "1")
		c.Error("BITCOUNT", "s", "1", "a")
		c.Error("BITCOUNT", "s", "0", "1", "BITS")
		c.Error("BITCOUNT")
		c.Do("SET", "empty", "")
		c.Do("BITCOUNT", "empty")
		c.Do("BITCOUNT", "empty", "0", "-1", "BIT")
		if c.makeList("l") {
			c.Error("BITCOUNT", "l")
			c.Error("BITCOUNT", "l", "x")
		}
	})
}

func TestBitmapBitpos(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "s", "\xff\xf0\x00")
		c.Do("SET", "ones", "\xff\xff\xff")
		c.Do("SET", "zeros", "\x00\x00\x00")
		c.Do("SET", "mid", "\x00\x00\x10\x00\xff")
		c.Do("SET", "n", "777")
		c.Do("SET", "empty", "")
		ranges := [][]string{{}, {"0"}, {"1"}, {"-1"}, {"2"}, {"10"}, {"-10"}, {"0", "0"}, {"0", "-1"}, {"1", "1"},
			{"2", "1"}, {"-1", "-2"}, {"0", "100"}, {"-100", "-1"}}
		bitRanges := [][]string{{"0", "-1"}, {"3", "9"}, {"7", "7"}, {"8", "15"}, {"12", "23"}, {"5", "5"}, {"9", "11"},
			{"-5", "-1"}, {"-9", "-9"}, {"16", "30"}, {"1", "22"}, {"18", "19"}, {"20", "100"}, {"4"}, {"20"}, {"23"}}
		for _, k := range []string{"s", "ones", "zeros", "mid", "n", "empty", "missing"} {
			for _, bit := range []string{"0", "1"} {
				for _, r := range ranges {
					c.Do(append([]string{"BITPOS", k, bit}, r...)...)
					if len(r) == 2 {
						c.Do(append([]string{"BITPOS", k, bit}, append(r, "byte")...)...)
					}
				}
				for _, r := range bitRanges {
					if len(r) == 2 {
						c.Do(append([]string{"BITPOS", k, bit}, append(r, "BIT")...)...)
					}
				}
			}
		}
		c.Error("BITPOS", "s", "2")
		c.Error("BITPOS", "s", "-1")
		c.Error("BITPOS", "s", "x")
		c.Error("BITPOS", "missing", "2")
		c.Do("BITPOS", "missing", "1", "x") // a missing key answers before the range
		c.Error("BITPOS", "s", "1", "x")
		c.Error("BITPOS", "s", "1", "0", "x")
		c.Error("BITPOS", "s", "1", "0", "1", "bits")
		c.Error("BITPOS", "s", "1", "x", "1", "bits")
		c.Error("BITPOS", "s", "1", "0", "x", "bits")
		c.Error("BITPOS", "s", "1", "0", "x", "bit")
		c.Error("BITPOS", "s", "1", "0", "1", "bit", "x")
		c.Error("BITPOS", "s")
		if c.makeList("l") {
			c.Error("BITPOS", "l", "1")
			c.Error("BITPOS", "l", "2")
		}
	})
}

func TestBitmapBitop(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "a", "foobar")
		c.Do("SET", "b", "abc\xff")
		c.Do("SET", "c", "123")
		for _, op := range []string{"AND", "or", "Xor"} {
			c.Do("BITOP", op, "dst", "a", "b", "c")
			c.Do("GET", "dst")
			c.Do("BITOP", op, "dst", "a", "missing")
			c.Do("GET", "dst")
			c.Do("BITOP", op, "dst", "a")
			c.Do("GET", "dst")
		}
		c.Do("BITOP", "NOT", "dst", "b")
		c.Do("GET", "dst")
		c.Do("OBJECT", "ENCODING", "dst")
		c.Do("BITOP", "NOT", "dst", "c")
		c.Do("GET", "dst")
		c.Do("SET", "one", "\xce")
		c.Do("BITOP", "NOT", "one", "one")
		c.Do("GET", "one")
		c.Do("OBJECT", "ENCODING", "one")
		c.Do("SET", "dst", "x", "EX", "100")
		c.Do("BITOP", "AND", "dst", "a", "b")
		c.Do("TTL", "dst")
		c.Do("BITOP", "OR", "dst", "missing", "missing2")
		c.Do("EXISTS", "dst")
		c.Do("BITOP", "NOT", "dst", "missing")
		c.Do("EXISTS", "dst")
		c.Error("BITOP", "NOT", "dst", "a", "b")
		c.Error("BITOP", "NAND", "dst", "a")
		c.Error("BITOP", "AND", "dst")
		c.Error("BITOP", "NOT", "dst")
		c.Do("BITOP", "and\x00x", "dst", "a", "b")
		if c.makeList("l") {
			c.Error("BITOP", "AND", "dst", "a", "l")
			c.Error("BITOP", "NOT", "dst", "l")
			c.Do("BITOP", "OR", "l", "a") // the destination may be of any type
			c.Do("TYPE", "l")
			c.Do("GET", "l")
		}
	})
}

func TestBitmapBitfield(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("BITFIELD", "bf")
		c.Do("EXISTS", "bf")
		c.Do("BITFIELD", "bf", "GET", "u8", "0")
		c.Do("EXISTS", "bf")
		c.Do("BITFIELD", "bf", "SET", "i8", "0", "-100", "GET", "u8", "0", "GET", "i4", "0")
		c.Do("BITFIELD", "bf", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "incrby", "i8", "#0", "-100")
		c.Do("GET", "bf")
		c.Do("BITFIELD", "bf", "SET", "u63", "#1", "9223372036854775807", "GET", "u63", "#1", "GET", "i64", "63")
		c.Do("BITFIELD", "bf", "SET", "i64", "0", "-9223372036854775808", "GET", "i64", "0", "GET", "u1", "0")
		c.Do("BITFIELD", "bf", "INCRBY", "i64", "0", "-1", "GET", "i64", "0")
		c.Do("BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i64", "0", "-1", "INCRBY", "i64", "0", "9223372036854775807",
			"INCRBY", "i64", "0", "9223372036854775807", "OVERFLOW", "FAIL", "INCRBY", "i64", "0", "1")
		c.Do("GET", "bf")
		c.Do("STRLEN", "bf")
		for _, ow := range []string{"WRAP", "SAT", "FAIL"} {
			for _, typ := range []string{"u1", "u3", "u8", "u31", "u63", "i1", "i3", "i8", "i32", "i63", "i64"} {
				for _, v := range []string{"0", "1", "-1", "5", "-5", "127", "128", "-128", "-129", "255", "256",
					"2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808"} {
					c.Do("BITFIELD", "w", "OVERFLOW", ow, "SET", typ, "3", v, "INCRBY", typ, "3", v, "INCRBY", typ, "3", v, "GET", typ, "3")
				}
			}
		}
		c.Do("GET", "w")
		c.Do("BITFIELD", "fail", "OVERFLOW", "FAIL", "SET", "u2", "0", "7")
		c.Do("GET", "fail") // created, though nothing was written
		c.Do("SET", "n", "42")
		c.Do("BITFIELD", "n", "GET", "u16", "0", "GET", "i8", "4", "GET", "u8", "16")
		c.Do("BITFIELD_RO", "n", "GET", "u16", "0", "GET", "i8", "#1")
		c.Do("BITFIELD_RO", "missing", "get", "i5", "100")
		c.Do("BITFIELD_RO", "n")
		c.Do("BITFIELD", "n", "SET", "u8", "#2", "65")
		c.Do("GET", "n")
		c.Do("BITFIELD", "x", "GET", "u8\x00j", "0")
		c.Do("BITFIELD", "x", "get\x00j", "u8", "0")
		for _, bad := range [][]string{
			{"BITFIELD_RO", "n", "SET", "u8", "0", "1"},
			{"BITFIELD_RO", "n", "GET", "u8", "0", "INCRBY", "u8", "0", "1"},
			{"BITFIELD_RO", "n", "INCRBY", "u8", "0", "x"},
			{"BITFIELD", "n", "GET", "u64", "0"}, {"BITFIELD", "n", "GET", "i65", "0"}, {"BITFIELD", "n", "GET", "i0", "0"},
			{"BITFIELD", "n", "GET", "U8", "0"}, {"BITFIELD", "n", "GET", "8", "0"}, {"BITFIELD", "n", "GET", "", "0"},
			{"BITFIELD", "n", "GET", "u-1", "0"}, {"BITFIELD", "n", "GET", "u", "0"}, {"BITFIELD", "n", "GET", "i 8", "0"},
			{"BITFIELD", "n", "GET", "u8", "-1"}, {"BITFIELD", "n", "GET", "u8", "#-1"}, {"BITFIELD", "n", "GET", "u8", "#"},
			{"BITFIELD", "n", "GET", "u8", "##1"}, {"BITFIELD", "n", "GET", "u8", "4294967296"},
			{"BITFIELD", "n", "GET", "u8", "#536870912"}, {"BITFIELD", "n", "GET", "i64", "#1152921504606846976", "GET", "i64", "-1"},
			{"BITFIELD", "n", "GET", "i64", "#9223372036854775807"},
			{"BITFIELD", "n", "GET", "u8"}, {"BITFIELD", "n", "SET", "u8", "0"}, {"BITFIELD", "n", "INCRBY", "u8", "0"},
			{"BITFIELD", "n", "SET", "u8", "0", "x"}, {"BITFIELD", "n", "INCRBY", "u8", "0", "1.5"},
			{"BITFIELD", "n", "OVERFLOW"}, {"BITFIELD", "n", "OVERFLOW", "SATURATE"}, {"BITFIELD", "n", "FOO"},
			{"BITFIELD", "n", "GET", "u8", "0", "FOO"}, {"BITFIELD", "n", "SET", "u8", "0", "1", "GET", "x", "0"},
			{"BITFIELD"},
		} {
			c.Error(bad...)
		}
		c.Do("GET", "n") // errors leave the key alone
		c.Do("BITFIELD", "big", "SET", "u8", "#536870911", "1")
		c.Do("STRLEN", "big")
		c.Do("BITFIELD", "big", "GET", "u8", "4294967287")
		c.Do("DEL", "big")
		if c.makeList("l") {
			c.Error("BITFIELD", "l", "GET", "u8", "0")
			c.Error("BITFIELD", "l", "SET", "u8", "0", "1")
			c.Error("BITFIELD_RO", "l", "GET", "u8", "0")
			c.Error("BITFIELD", "l")
			c.Error("BITFIELD", "l", "GET", "u64", "0") // arguments first
		}
	})
}

// TestBitmapBitfieldInMulti is redis-py's pipeline case: BITFIELD's
// array of results inside MULTI/EXEC among other replies, then alone, and
// BITFIELD_RO queued.
func TestBitmapBitfieldInMulti(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("MULTI")
		c.Do("SET", "a", "1")
		c.Do("BITFIELD", "b", "SET", "u8", "8", "255", "GET", "u8", "0", "GET", "u4", "8", "GET", "u4", "12", "GET", "u4", "13")
		c.Do("GET", "a")
		c.Do("EXEC")
		c.Do("MULTI")
		c.Do("BITFIELD", "b", "INCRBY", "u4", "12", "1", "OVERFLOW", "FAIL", "INCRBY", "u4", "12", "100")
		c.Do("BITFIELD_RO", "b", "GET", "u4", "12", "GET", "i8", "8")
		c.Do("BITFIELD", "a", "GET", "u8", "0")
		c.Do("EXEC")
		c.Error("DISCARD")
	})
}

// TestBitmapRandom runs random bit writes and reads on both servers.
func TestBitmapRandom(t *testing.T) {
	c := newPair(t)
	r := rand.New(rand.NewPCG(3, 32))
	n := func(lim int) string { return strconv.Itoa(r.IntN(lim) - lim/8) }
	types := []string{"u1", "u5", "u8", "u13", "u32", "u63", "i1", "i7", "i16", "i33", "i64"}
	for range 600 {
		k := "r" + strconv.Itoa(r.IntN(3))
		switch r.IntN(7) {
		case 0:
			c.Do("SETBIT", k, strconv.Itoa(r.IntN(400)), strconv.Itoa(r.IntN(2)))
		case 1:
			c.Do("BITCOUNT", k, n(60), n(60), []string{"BIT", "BYTE"}[r.IntN(2)])
		case 2:
			c.Do("BITPOS", k, strconv.Itoa(r.IntN(2)), n(400), n(400), "BIT")
		case 3:
			c.Do("BITPOS", k, strconv.Itoa(r.IntN(2)), n(60))
		case 4:
			c.Do("BITFIELD", k, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[r.IntN(3)],
				"INCRBY", types[r.IntN(len(types))], strconv.Itoa(r.IntN(400)), strconv.FormatInt(r.Int64()>>r.IntN(64)-1<<20, 10),
				"GET", types[r.IntN(len(types))], strconv.Itoa(r.IntN(400)))
		case 5:
			c.Do("BITOP", []string{"AND", "OR", "XOR"}[r.IntN(3)], "r"+strconv.Itoa(r.IntN(3)), "r0", "r1", "r2")
		case 6:
			c.Do("GET", k)
		}
	}
}
