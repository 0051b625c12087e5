package cell

import (
	"testing"
	"time"
)

// The pause in effect is the strongest of the purposes' pauses, until
// the latest end of that kind; ending one purpose leaves the others.
func TestPausePurposes(t *testing.T) {
	now := time.Now().UnixMilli()
	soon, later := now+60_000, now+120_000
	type op struct {
		purpose   pausePurpose
		until     int64 // 0: unpause
		writeOnly bool
	}
	for _, tc := range []struct {
		name string
		ops  []op
		want *pauseState
	}{
		{"none", nil, nil},
		{"client write", []op{{pauseByClient, soon, true}}, &pauseState{soon, true}},
		{"unpause ends the client's own",
			[]op{{pauseByClient, soon, true}, {pauseByClient, 0, false}}, nil},
		{"unpause leaves a failover's",
			[]op{{pauseForFailover, later, true}, {pauseByClient, soon, false}, {pauseByClient, 0, false}},
			&pauseState{later, true}},
		{"unpause leaves a cluster failover's",
			[]op{{pauseByClient, soon, true}, {pauseForClusterFailover, soon, true}, {pauseByClient, 0, false}},
			&pauseState{soon, true}},
		{"the failover's end leaves the client's",
			[]op{{pauseByClient, soon, false}, {pauseForFailover, later, true}, {pauseForFailover, 0, false}},
			&pauseState{soon, false}},
		{"ALL wins over a longer WRITE",
			[]op{{pauseForFailover, later, true}, {pauseByClient, soon, false}}, &pauseState{soon, false}},
		{"the latest end among the same kind",
			[]op{{pauseByClient, later, true}, {pauseForFailover, soon, true}}, &pauseState{later, true}},
		{"a purpose's pause is extended, never shortened, ALL kept",
			[]op{{pauseByClient, later, false}, {pauseByClient, soon, true}}, &pauseState{later, false}},
		{"an ended pause applies no more",
			[]op{{pauseByClient, now - 1, false}, {pauseForFailover, soon, true}}, &pauseState{soon, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{}
			for _, o := range tc.ops {
				if o.until == 0 {
					s.unpause(o.purpose)
				} else {
					s.pause(o.purpose, o.until, o.writeOnly)
				}
			}
			got := s.paused.Load()
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Errorf("in effect %+v, want %+v", got, tc.want)
			}
		})
	}
}
