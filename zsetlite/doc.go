// Package zsetlite is the sorted set behind cellserver's ZADD family: distinct
// binary members, each with a float64 score, ordered by score and then by
// member bytes (bytes.Compare, so "A" < "a" and "" comes first). It is pure:
// no locks, no I/O, nothing of RESP, and it imports nothing of ours. The
// command layer parses arguments, rejects NaN scores and implements replies;
// this package gives it the primitives (Score, Add with ZADD's flags, Delete,
// Rank, ranges by rank, score and lex with LIMIT, counts, range deletes, pops,
// random members) and Encoding, which answers OBJECT ENCODING as Redis 7.0
// would after the same operations.
//
// # Two encodings
//
// The common set is small: a sliding-window rate limiter keeps one set of
// millisecond timestamps per user and action. While a set holds at most
// Config.MaxListpackEntries members of at most Config.MaxListpackValue bytes
// (Redis's zset-max-listpack-entries and -value, 128 and 64 by default) it is
// one pointer-free []byte of entries in order (see packed.go for the layout).
// Canonical decimal integers are stored as integers, as Redis's listpack
// does, integral scores as 1 to 6 byte integers, and a member that is its
// own integral score once, as the score: a window's timestamp entry takes 8
// bytes where a listpack takes about 20. A trailing back-length per entry
// gives O(1) access to the last entry.
//
// The insert that would break a threshold converts the set, exactly where
// Redis converts listpack to skiplist, to a counted B+tree whose leaves are
// packed blocks of up to 32 entries in the same codec (btree.go): a
// timestamp entry still takes 8 bytes, and a leaf is one pointer-free
// allocation. Counts in internal nodes make rank, select-by-rank and
// counting a score or lex range O(log n). A leaf's node keeps the offsets
// of every fifth entry in room its size class leaves spare (leafmarks.go),
// so a lookup in a leaf is a binary search and a walk of at most four
// entries, and ZRANK finds the member and counts its rank in one descent. As in Redis, nothing converts
// back.
//
// Self-keyed sets, where every member is the decimal text of its score (ZADD
// k now now, the usual window), get two more savings. A packed one knows a
// member past its last entry is new without scanning for it, so ZADD at the
// tail is O(1). A large one keeps no index at all, since a member's score is
// its own value: the tree alone answers ZSCORE in O(log n). Other large sets
// keep an index (index.go) of (member hash, score) pairs, 12 bytes a slot
// and no copy of the member: a lookup takes each candidate score and asks
// the tree. The first member or update that breaks self-keying builds it,
// once.
//
// # The window fast paths
//
//   - Appending after the last entry of a packed set compares with the last
//     entry only and grows the buffer by a quarter when full: amortised O(1),
//     no rewrite. (Finding whether the member already exists is still a scan,
//     as in Redis, but a scan of descriptor bytes, not of decoded members.)
//   - Removing a score prefix finds its end by walking the k removed entries
//     and closes the gap with one memmove. In the B+tree it drops whole leaves
//     and subtrees: O(log n) plus the one partial leaf when self-keyed, and
//     one index removal per member otherwise.
//   - Appending to a B+tree fills leaves completely instead of splitting them
//     in half, so append-only sets are dense.
//   - Len is a field in both encodings.
//
// # Invariants
//
//   - Entries are strictly increasing in (score, member); members are unique.
//   - Scores compare as floats: -0 equals 0 and ties go to the member. A
//     packed set stores -0 as 0, as a listpack does (Redis prints d2string's
//     text of the score into it); the B+tree keeps -0, as a skiplist does.
//     Add returns the computed score, which is what Redis replies.
//   - Lex ranges are defined as Redis defines them, for sets whose scores are
//     all equal. With mixed scores every lex operation still selects one
//     consistent interval and never panics, but, like Redis's (which then
//     depends on the encoding and on skiplist levels), the answer has no
//     meaning.
//   - Members passed to a Visitor alias the set's storage: valid during the
//     call only, never to be modified.
//
// MemoryBytes estimates the heap held, for INFO and the benchmarks, which
// report bytes per element next to ns/op.
package zsetlite
