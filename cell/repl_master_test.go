package cell

import (
	"bytes"
	"testing"
)

// TestBacklogBounded: however much is streamed, the backlog holds at
// most twice repl-backlog-size (it is trimmed in place), serves exactly
// the last repl-backlog-size bytes, and its array does not outgrow four
// times the size.
func TestBacklogBounded(t *testing.T) {
	for _, size := range []int64{16 << 10, 100 << 10} {
		var r replMaster
		r.backlogMax.Store(size)
		var all []byte
		cmd := []byte("*3\r\n$4\r\nZADD\r\n$3\r\nkey\r\n$20\r\n")
		for i := range 20000 {
			b := append(append([]byte{}, cmd...), byte(i), byte(i>>8), '\r', '\n')
			r.feed(b)
			all = append(all, b...)
			if int64(len(r.backlog)) > 2*size || int64(cap(r.backlog)) > 4*size {
				t.Fatalf("size %d: after %d bytes the backlog holds %d (array %d)", size, len(all), len(r.backlog), cap(r.backlog))
			}
		}
		hist := r.histLen()
		if hist != size || r.off != int64(len(all)) {
			t.Fatalf("size %d: histlen %d, offset %d; want %d, %d", size, hist, r.off, size, len(all))
		}
		if got := r.backlog[int64(len(r.backlog))-hist:]; !bytes.Equal(got, all[int64(len(all))-hist:]) {
			t.Errorf("size %d: the backlog's last %d bytes are not the stream's", size, hist)
		}
	}
}
