package cell

import "testing"

// TestClassLimitsOver: the hard limit closes at once, the soft one only
// after staying reached for more than its seconds, as Redis counts them.
func TestClassLimitsOver(t *testing.T) {
	l := classLimits{hard: 100, soft: 50, softSec: 2}
	steps := []struct {
		used, now int64
		want      bool
	}{
		{10, 1000, false},
		{50, 1000, false}, // soft reached: the clock starts
		{60, 1001, false}, // 1 s
		{70, 1002, false}, // 2 s: not more than softSec yet
		{40, 1003, false}, // below soft: the clock stops
		{55, 1004, false}, // reached again: starts over
		{55, 1006, false}, // 2 s
		{55, 1007, true},  // 3 s
		{100, 1007, true}, // hard
		{99, 2000, false}, // soft reached anew
		{100, 2000, true}, // hard, whatever the time
	}
	var softAt int64
	for i, s := range steps {
		if got := l.over(s.used, &softAt, s.now); got != s.want {
			t.Errorf("step %d: %d bytes at %d: over=%v, want %v", i, s.used, s.now, got, s.want)
		}
		if s.want {
			softAt = 0 // a closed client starts no later clock
		}
	}
	none := classLimits{}
	if none.over(1<<40, &softAt, 0) {
		t.Error("0 0 0 limited something")
	}
	hardOnly := classLimits{hard: 10}
	if hardOnly.over(9, &softAt, 0) || !hardOnly.over(10, &softAt, 0) {
		t.Error("a hard limit of 10 is reached at 10 bytes, not before")
	}
}
