package keyspace

import (
	"cmp"
	"hash/maphash"
	"math/bits"
	"slices"
)

// SCAN's cursor is a position in the keyspace's 64-bit key hash, the hash
// that also places keys in shards (by its low bits; in cluster mode the
// slot places them, and nothing below depends on which). With S = 2^b shards, a
// cursor c names shard c&(S-1) and a threshold c>>b; a key's position is
// the top 53-b bits of its hash. The keys of that shard at or above the
// threshold are still to come. A call returns keys of a shard in increasing
// position order, always including every key that shares the last position
// it returns, and the next cursor starts just above that position, or at
// the next shard. A key's hash never changes while the server runs, so a
// key present from the first call to the last is returned exactly once,
// whatever is added, deleted or grown meanwhile (keys added or deleted
// during the scan may or may not appear, as in Redis). Cursor 0 starts and
// ends a scan. Cursors stay below 2^53, so clients and scripts that keep
// them as doubles (JavaScript, Lua) do not corrupt them.
//
// Each call costs a pass over one or more shards. So that a full scan stays
// linear in the number of keys, a call takes at least 1/ScanSlices of a
// shard, which may return more keys than COUNT (Redis may too).
const ScanSlices = 64

// ScanCursorBits is the width of every cursor.
const ScanCursorBits = 53

// Scan collects keys of db from cursor on, about count of them, and
// returns them with the next cursor (see the cursor scheme above). Expired
// keys are among them: the caller looks each up. db's shards must be locked.
func (ks *Keyspace) Scan(db int, cursor uint64, count int64) ([]string, uint64) {
	shards := ks.dbs[db].shards
	mask := ks.mask
	shardBits := uint(bits.OnesCount64(mask))
	posBits := ScanCursorBits - shardBits
	endPos := uint64(1) << posBits // positions are below this
	var out []string
	var cands []keyPos
	shard, thr := cursor&mask, cursor>>shardBits
	for int64(len(out)) < count {
		s := &shards[shard]
		cands = cands[:0]
		for k := range s.keys.all() {
			if pos := maphash.String(keySeed, k) >> (64 - posBits); pos >= thr {
				cands = append(cands, keyPos{pos, k})
			}
		}
		want := max(int(count)-len(out), s.keys.len()/ScanSlices, 1)
		if len(cands) > want {
			smallestFirst(cands, want)
			last := cands[0].pos
			for _, c := range cands[:want] {
				out = append(out, c.k)
				last = max(last, c.pos)
			}
			for _, c := range cands[want:] {
				if c.pos == last { // keys sharing the last position go together
					out = append(out, c.k)
				}
			}
			if last+1 < endPos {
				return out, (last+1)<<shardBits | shard
			}
		} else {
			for _, c := range cands {
				out = append(out, c.k)
			}
		}
		// This shard is done: on to the next one, or the end.
		shard, thr = shard+1, 0
		if shard > mask {
			return out, 0
		}
	}
	return out, shard
}

// keyPos is a key and its SCAN position.
type keyPos struct {
	pos uint64
	k   string
}

// smallestFirst reorders c so that its k smallest positions come first, in
// no particular order: quickselect, linear on average, where sorting every
// call would make a full scan of a big shard cost n log n per call.
func smallestFirst(c []keyPos, k int) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		if hi-lo < 16 {
			slices.SortFunc(c[lo:hi+1], func(a, b keyPos) int { return cmp.Compare(a.pos, b.pos) })
			return
		}
		// Positions are hash bits, so the middle element is a random pivot.
		p := c[lo+(hi-lo)/2].pos
		i, j := lo, hi
		for i <= j {
			for c[i].pos < p {
				i++
			}
			for c[j].pos > p {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}
