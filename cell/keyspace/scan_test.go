package keyspace

import "testing"

func TestSmallestFirst(t *testing.T) {
	for n := 1; n < 300; n += 7 {
		for _, k := range []int{1, n / 3, n / 2, n - 1, n} {
			if k < 1 {
				continue
			}
			c := make([]keyPos, n)
			for i := range c {
				c[i].pos = uint64((i * 7919) % 101) // duplicates included
			}
			smallestFirst(c, k)
			var maxIn uint64
			for _, x := range c[:k] {
				maxIn = max(maxIn, x.pos)
			}
			for _, x := range c[k:] {
				if x.pos < maxIn {
					t.Fatalf("n=%d k=%d: %d after the first k, whose max is %d", n, k, x.pos, maxIn)
				}
			}
		}
	}
}
