package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkKeyIndexGet is a lookup of a random present key (or, for the
// miss rows, an absent one) among n keys spread over 16 indexes by their
// hash, as a database's shards spread CL.THROTTLE's keys: the hash of the
// key and the index's probe, the part of every command's lookup that
// keyIndex.find dominates in the server's profiles.
func BenchmarkKeyIndexGet(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int
		miss bool
	}{
		{"10k", 10_000, false},
		{"100k", 100_000, false},
		{"1M", 1_000_000, false},
		{"100k-miss", 100_000, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const shards = 16
			var ixs [shards]keyIndex
			for i := range bc.n {
				k := []byte("user:" + strconv.Itoa(i) + ":reply")
				h := keyHash64(k)
				e, _ := allocEntry(indexHash(h), k, 0)
				ixs[h&(shards-1)].insert(e)
			}
			// The key looked up is formatted into one buffer, as a
			// request's key sits in the connection's read buffer: a
			// table of keys would add its own cache misses.
			suffix := ":reply"
			if bc.miss {
				suffix = ":other"
			}
			var buf [32]byte
			order := make([]int32, 1<<16)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range order {
				order[i] = int32(rng.IntN(bc.n))
			}
			b.ResetTimer()
			found := 0
			for i := 0; i < b.N; i++ {
				k := strconv.AppendInt(append(buf[:0], "user:"...), int64(order[i&(len(order)-1)]), 10)
				k = append(k, suffix...)
				h := keyHash64(k)
				if ixs[h&(shards-1)].getH(indexHash(h), k) != nil {
					found++
				}
			}
			if want := b.N; !bc.miss && found != want || bc.miss && found != 0 {
				b.Fatalf("found %d of %d", found, b.N)
			}
		})
	}
}

// BenchmarkKeyIndexGetBatch is BenchmarkKeyIndexGet's 100k row for 16
// keys at a time, as a pipeline of 16 requests brings them: plain, one
// lookup after the other; prefetched, the lines of every probe asked for
// first (prefetchHome), so that their cache misses overlap; entries, then
// also every entry's line (prefetchEntry), as prefetchKeys does.
func BenchmarkKeyIndexGetBatch(b *testing.B) {
	const shards, n, batch = 16, 100_000, 16
	var ixs [shards]keyIndex
	for i := range n {
		k := []byte("user:" + strconv.Itoa(i) + ":reply")
		h := keyHash64(k)
		e, _ := allocEntry(indexHash(h), k, 0)
		ixs[h&(shards-1)].insert(e)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range []string{"plain", "prefetched", "entries"} {
		pre := name != "plain"
		b.Run(name, func(b *testing.B) {
			var bufs [batch][32]byte
			var keys [batch][]byte
			found := 0
			for i := 0; i < b.N; i += batch {
				for j := range keys {
					keys[j] = append(strconv.AppendInt(append(bufs[j][:0], "user:"...), int64(rng.IntN(n)), 10), ":reply"...)
				}
				if pre {
					for _, k := range keys {
						h := keyHash64(k)
						ixs[h&(shards-1)].prefetchHome(indexHash(h))
					}
				}
				if name == "entries" {
					for _, k := range keys {
						h := keyHash64(k)
						ixs[h&(shards-1)].prefetchEntry(indexHash(h))
					}
				}
				for _, k := range keys {
					h := keyHash64(k)
					if ixs[h&(shards-1)].getH(indexHash(h), k) != nil {
						found++
					}
				}
			}
			if found < b.N {
				b.Fatalf("found %d of %d", found, b.N)
			}
		})
	}
}
