package cell

import "testing"

// TestScriptReserve: a builtin's reservation fits while the heap stays
// under the script memory limit, and one past it stops the run with the
// memory error.
func TestScriptReserve(t *testing.T) {
	r := &scriptRun{stop: make(chan struct{})}
	if !r.Reserve(1<<20) || r.Err() != nil {
		t.Fatalf("1 MB refused: %v", r.Err())
	}
	if r.memBase == 0 {
		t.Errorf("no baseline after the first reservation")
	}
	if r.Reserve(scriptMemoryLimit + 1) {
		t.Fatalf("a reservation past the limit fitted")
	}
	if err := r.Err(); err == nil || err.Error() != ErrScriptMemory {
		t.Errorf("stopped with %v, want %q", err, ErrScriptMemory)
	}
}

func TestMemoryBaseline(t *testing.T) {
	for _, c := range []struct{ heap, live, want uint64 }{
		{100, 40, 40}, // garbage since the last collection does not count
		{100, 0, 100}, // no collection yet
		{100, 150, 100},
	} {
		if got := memoryBaseline(c.heap, c.live); got != c.want {
			t.Errorf("memoryBaseline(%d, %d) = %d, want %d", c.heap, c.live, got, c.want)
		}
	}
}
