package rdb

import (
	"encoding/binary"
	"math"
	"time"
)

// Builders for the encodings Redis 7.0 no longer writes, following their
// format descriptions (blobs.go). redis-server loading what they build is
// what proves them (TestRedisLoadsOldEncodings): it checks ziplists and
// zipmaps entry by entry as it converts them.

// ziplist builds a ziplist of string and int64 entries, each integer in
// the smallest encoding.
func ziplist(entries ...any) []byte {
	b := make([]byte, 10)
	prev, tail := 0, 10
	for _, e := range entries {
		tail = len(b)
		start := len(b)
		if prev < 254 {
			b = append(b, byte(prev))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(prev))
		}
		switch v := e.(type) {
		case string:
			switch n := len(v); {
			case n < 64:
				b = append(b, byte(n))
			case n < 16384:
				b = append(b, 0x40|byte(n>>8), byte(n))
			default:
				b = binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
			}
			b = append(b, v...)
		case int64:
			switch {
			case v >= 0 && v <= 12:
				b = append(b, 0xf1+byte(v))
			case v >= math.MinInt8 && v <= math.MaxInt8:
				b = append(b, 0xfe, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				b = binary.LittleEndian.AppendUint16(append(b, 0xc0), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				b = append(b, 0xf0, byte(v), byte(v>>8), byte(v>>16))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				b = binary.LittleEndian.AppendUint32(append(b, 0xd0), uint32(v))
			default:
				b = binary.LittleEndian.AppendUint64(append(b, 0xe0), uint64(v))
			}
		}
		prev = len(b) - start
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(tail))
	binary.LittleEndian.PutUint16(b[8:], uint16(len(entries)))
	return b
}

// zipmap builds a zipmap of field, value pairs, each value followed by
// free unused bytes.
func zipmap(free int, pairs ...string) []byte {
	b := []byte{byte(len(pairs) / 2)}
	putLen := func(n int) {
		if n < 254 {
			b = append(b, byte(n))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 254), uint32(n))
		}
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		putLen(len(pairs[i]))
		b = append(b, pairs[i]...)
		putLen(len(pairs[i+1]))
		b = append(b, byte(free))
		b = append(b, pairs[i+1]...)
		b = append(b, make([]byte, free)...)
	}
	return append(b, 0xff)
}

// intset builds an intset of ascending values with size-byte integers.
func intset(size int, vals ...int64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(size))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vals)))
	for _, v := range vals {
		for i := 0; i < size; i++ {
			b = append(b, byte(v>>(8*i)))
		}
	}
	return b
}

// oldEncodingsFile is a version-9 file (Redis 6.2's) holding every old
// encoding, with a TTL in seconds and one in milliseconds, in two databases.
func oldEncodingsFile() []byte {
	b := []byte("REDIS0009")
	str := func(s string) { b = AppendString(b, []byte(s)) }
	blob := func(p []byte) { b = append(appendLen(b, uint64(len(p))), p...) }
	aux := func(k, v string) { b = append(b, opAux); str(k); str(v) }
	key := func(t byte, k string) { b = append(b, t); str(k) }
	long := string(make([]byte, 300))

	aux("redis-ver", "6.2.0")
	aux("redis-bits", "64")
	b = append(b, opSelectDB, 0, opResizeDB, 12, 2)

	key(typeListZiplist, "list:ziplist")
	blob(ziplist("a", int64(5), int64(12), int64(-1), int64(300), int64(-70000), int64(1<<20),
		int64(3000000000), int64(-9223372036854775808), long+"x", ""))

	key(typeListQuicklist, "list:quicklist")
	b = appendLen(b, 3)
	blob(ziplist("n1a", int64(1)))
	blob(ziplist()) // empty nodes are skipped
	blob(ziplist("n2a", long, int64(-20)))

	key(typeSetIntset, "set:intset")
	blob(intset(8, -5, 1, 1<<40))
	key(typeSetIntset, "set:intset16")
	blob(intset(2, -300, 7, 300))

	key(typeZSetZiplist, "zset:ziplist")
	blob(ziplist("m1", "1.5", "m2", int64(3), "m3", "-inf", "m4", "inf", "12", "-0.25"))

	key(typeHashZiplist, "hash:ziplist")
	blob(ziplist("f1", "v1", "f2", int64(7), "f3", long, "", "empty"))

	key(typeHashZipmap, "hash:zipmap")
	blob(zipmap(2, "k1", "v1", "key2", long, "k3", ""))

	// Sorted set with scores as text (type 3), infinities by their codes.
	key(typeZSet, "zset:strings")
	b = appendLen(b, 4)
	str("a")
	b = append(b, 3, '1', '.', '5')
	str("b")
	b = append(b, 254)
	str("c")
	b = append(b, 255)
	str("d")
	b = append(b, 2, '-', '3')

	key(typeList, "list:plain")
	b = appendLen(b, 2)
	str("x")
	str("123")

	b = binary.LittleEndian.AppendUint32(append(b, opExpireTime), uint32(time.Now().Add(48*time.Hour).Unix()))
	key(typeSet, "set:plain")
	b = appendLen(b, 2)
	str("p")
	str("q")

	b = binary.LittleEndian.AppendUint64(append(b, opExpireTimeMs), uint64(time.Now().Add(time.Hour).UnixMilli()))
	key(typeHash, "hash:plain")
	b = appendLen(b, 1)
	str("hf")
	str("hv")

	b = append(b, opSelectDB, 3)
	key(typeString, "db3")
	str("three")

	b = append(b, opEOF)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}
