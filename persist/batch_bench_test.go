package persist

import "testing"

// BenchmarkBatchW1Record: the encoding of a W1 update's log record, as
// commit builds it: the window's head, the timestamp added and the one
// removed.
func BenchmarkBatchW1Record(b *testing.B) {
	var bt Batch
	key := []byte("limit:12345:w1")
	add, del := []byte("1700000060123"), []byte("1700000000123")
	for b.Loop() {
		bt.PutZSetHead(0, key, 1_700_000_120_000)
		bt.PutHeadMember(add, 1700000060123)
		bt.DeleteHeadMember(del)
		bt.reset()
	}
}
