package persist

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// A checkpoint's batch reaches Pebble big enough to be flushed as a batch
// of its own, which Pebble first sorts by key with sort.Sort and a
// comparison that decodes both keys each time: over a million keys that
// sort was about 5% of the server's CPU, since the checkpoint visits keys
// in hash order. Handed the operations in key order, Pebble's sort only
// checks them, and putting them in order here costs less: a radix sort on
// 16 bytes of each key past the prefix all keys share. (A comparison sort
// here cost as much as Pebble's.)
//
// Pebble gives a batch's operations sequence numbers in the order they are
// added, and a range deletion removes only what came before it. So the
// order changes only within a run of point operations between two range
// deletions (DeleteKey, DeleteDB), and operations on one key keep theirs.

// snapOp is one point operation of a snapshot batch; its key and value
// are given by their place in the batch's bytes.
type snapOp struct {
	hi, lo     uint64 // 16 bytes of the key from the run's common prefix on, big-endian
	koff, klen uint32
	voff, vlen uint32
	seq        int32 // its place in the run
	del        bool
}

// snapSorter holds apply's scratch space, 80 bytes an operation of the
// biggest batch (about 7 MB at 4 MB batches), from one batch to the next
// of a checkpoint: made again for each, it doubled the collector's work.
// release gives it back when the checkpoint ends.
type snapSorter struct {
	ops, tmp []snapOp
}

func (ss *snapSorter) release() { *ss = snapSorter{} }

// apply adds wire's snapshot operations to pb, each run of point
// operations in key order.
func (ss *snapSorter) apply(pb *pebble.Batch, wire []byte) error {
	ops := ss.ops[:0]
	flush := func() error {
		ss.sort(wire, ops)
		for i := range ops {
			o := &ops[i]
			k := wire[o.koff : o.koff+o.klen]
			var err error
			if o.del {
				err = pb.Delete(k, nil)
			} else {
				err = pb.Set(k, wire[o.voff:o.voff+o.vlen], nil)
			}
			if err != nil {
				return err
			}
		}
		ops = ops[:0]
		return nil
	}
	err := walkWire(wire, func(op opKind, k, v []byte) error {
		switch op {
		case opSet, opDelete:
			ops = append(ops, snapOp{
				koff: uint32(offsetIn(wire, k)), klen: uint32(len(k)),
				voff: uint32(offsetIn(wire, v)), vlen: uint32(len(v)),
				seq: int32(len(ops)), del: op == opDelete,
			})
			return nil
		case opDeleteRange:
			if err := flush(); err != nil {
				return err
			}
			return pb.DeleteRange(k, v, nil)
		}
		return fmt.Errorf("persist: op %d is the effect log's, not the snapshot's", op)
	})
	if err == nil {
		err = flush()
	}
	ss.ops = ops[:0]
	return err
}

// sort puts ops, whose keys are in wire, in key order, operations on one
// key in their order. It orders them by 16 bytes of each key past the
// prefix the keys share, taken as two numbers, with a radix sort (stable,
// so ties keep their order); a run those bytes leave tied is sorted the
// same way past its own longer shared prefix when all its keys go on past
// them, else by whole keys.
func (ss *snapSorter) sort(wire []byte, ops []snapOp) {
	key := func(o *snapOp) []byte { return wire[o.koff : o.koff+o.klen] }
	byKey := func(a, b snapOp) int {
		if c := bytes.Compare(key(&a), key(&b)); c != 0 {
			return c
		}
		return int(a.seq - b.seq)
	}
	if len(ops) <= 64 { // not worth the radix sort's passes
		slices.SortFunc(ops, byKey)
		return
	}
	first := key(&ops[0])
	common := len(first)
	for i := 1; i < len(ops) && common > 0; i++ {
		k := key(&ops[i])
		n := 0
		for n < len(k) && n < common && k[n] == first[n] {
			n++
		}
		common = n
	}
	for i := range ops {
		k := key(&ops[i])[common:]
		ops[i].hi, ops[i].lo = bigEndian8(k), 0
		if len(k) > 8 {
			ops[i].lo = bigEndian8(k[8:])
		}
	}
	ss.radix(ops)
	for i := 0; i < len(ops); {
		j, long := i+1, len(key(&ops[i])) > common+16
		for j < len(ops) && ops[j].hi == ops[i].hi && ops[j].lo == ops[i].lo {
			long = long && len(key(&ops[j])) > common+16
			j++
		}
		switch {
		case j-i < 2:
		case long:
			// All go on past the 16 bytes they share: the shared
			// prefix of this run is longer, so the recursion ends.
			ss.sort(wire, ops[i:j])
		default:
			// A key that ends within the 16 bytes ties on its zero
			// padding ("a" and "a\x00"): whole keys decide.
			slices.SortFunc(ops[i:j], byKey)
		}
		i = j
	}
}

// radix sorts ops by (hi, lo), stably: one counting pass per byte, from
// the last, skipping the bytes every key has alike (keys of one shape
// differ in a few).
func (ss *snapSorter) radix(ops []snapOp) {
	if cap(ss.tmp) < len(ops) {
		ss.tmp = make([]snapOp, len(ops))
	}
	src, dst := ops, ss.tmp[:len(ops)]
	for b := 0; b < 16; b++ {
		shift := uint(8 * b)
		if b >= 8 {
			shift -= 64
		}
		digit := func(o *snapOp) uint8 {
			if b < 8 {
				return uint8(o.lo >> shift)
			}
			return uint8(o.hi >> shift)
		}
		var count [256]int
		for i := range src {
			count[digit(&src[i])]++
		}
		if count[digit(&src[0])] == len(src) {
			continue
		}
		sum := 0
		for d := range count {
			count[d], sum = sum, sum+count[d]
		}
		for i := range src {
			d := digit(&src[i])
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ops[0] {
		copy(ops, src)
	}
}

// offsetIn is where sub, a slice of b's bytes (or empty), starts in b.
func offsetIn(b, sub []byte) int {
	if len(sub) == 0 {
		return 0
	}
	return cap(b) - cap(sub)
}

// bigEndian8 is the first 8 bytes of k as a big-endian number, zeros after
// a shorter k: ordering by it agrees with bytes.Compare wherever it
// differs.
func bigEndian8(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}
