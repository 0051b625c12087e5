package cell

import (
	"context"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestThrottleAllErrors(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("cl.throttle", "a", "4", "1", "60")
	before := []string{c.do("get", "a"), c.do("pexpiretime", "a")}
	usageAll := "-" + MsgThrottleAllUsage + "\r\n"
	c.do("set", "str", "not a number")
	putObject(srv, "h", oneFieldHash())
	tests := []struct {
		args string
		want string
	}{
		{"cl.throttleall", usageAll},
		{"cl.throttleall a 4 1 60", usageAll},
		{"cl.throttleall a 4 1 60 1 b", usageAll},
		{"cl.throttleall a 4 1 60 1 b 1 1 1", usageAll},
		{"cl.probeall a 4 1 60", "-" + MsgProbeAllUsage + "\r\n"},
		{"cl.throttleall a x 1 60 1", parse + "x\r\n"},
		{"cl.throttleall a 4 1 60 1 b 1 1 1 q", parse + "q\r\n"},
		{"cl.throttleall a 4 1 60 1 b 1 y 1 1", parse + "y\r\n"},
		{"cl.throttleall a 4 1 60 1 b 1 0 1 1", zero},
		// The zero rate of a later limit wins over the key error of an
		// earlier one, as in CL.THROTTLE.
		{"cl.throttleall h 4 1 60 1 b 1 0 1 1", zero},
		{"cl.throttleall a 4 1 60 1 h 1 1 1 1", "-" + ErrWrongType + "\r\n"},
		{"cl.throttleall a 4 1 60 1 str 1 1 1 1", "-Cell error: invalid digit found in string\r\n"},
		{"cl.probeall a 4 1 60 1 h 1 1 1 1", "-" + ErrWrongType + "\r\n"},
	}
	for _, tc := range tests {
		if got := c.do(strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.args, got, tc.want)
		}
	}
	if after := []string{c.do("get", "a"), c.do("pexpiretime", "a")}; after[0] != before[0] || after[1] != before[1] {
		t.Errorf("a failed call changed a: %q -> %q", before, after)
	}
	if got := c.do("exists", "b"); got != ":0\r\n" {
		t.Errorf("a failed call created b: %q", got)
	}
}

// TestThrottleAllDecisions replays random calls at instants the test
// chooses (the server's limiter clock). Each CL.THROTTLEALL call's limits
// are first asked of CL.PROBE one by one, at the same instant: the call
// must reply those arrays, and be allowed iff all of them are. A twin of
// every key ("t:" prefix) gets CL.THROTTLE for each limit of each allowed
// call, so after every call both families hold the same TATs and expiry
// times: an allowed call charged every key, a refused one none.
func TestThrottleAllDecisions(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	rng := rand.New(rand.NewSource(34))
	now := time.Now().UnixNano()
	keys := []string{"k0", "k1", "k2", "k3", "{k0}x"}
	allowed, refused := 0, 0
	for step := 0; step < 600; step++ {
		now += rng.Int63n(int64(400 * time.Millisecond))
		srv.limiters.fixedNow.Store(now)
		n := 1 + rng.Intn(3)
		args := []string{"cl.throttleall"}
		var limits [][]string
		for i := 0; i < n; i++ {
			l := []string{keys[rng.Intn(len(keys))], strconv.Itoa(rng.Intn(4)), strconv.Itoa(1 + rng.Intn(3)), "1", strconv.Itoa(rng.Intn(3))}
			limits = append(limits, l)
			args = append(args, l...)
		}
		probe := strings.Fields(strings.Join(args[1:], " "))
		if got, again := c.do(append([]string{"cl.probeall"}, probe...)...), c.do(append([]string{"cl.probeall"}, probe...)...); got != again {
			t.Fatalf("step %d: CL.PROBEALL changed something: %q then %q", step, got, again)
		}
		distinct := map[string]bool{}
		want, all := "", true
		for _, l := range limits {
			distinct[l[0]] = true
			r := c.do(append([]string{"cl.probe"}, l...)...)
			want += r
			all = all && strings.HasPrefix(r, "*5\r\n:0\r\n")
		}
		got := c.do(args...)
		if len(distinct) == len(limits) { // one limit per key: each as if alone
			head := "*" + strconv.Itoa(n+1) + "\r\n:1\r\n"
			if all {
				head = "*" + strconv.Itoa(n+1) + "\r\n:0\r\n"
			}
			if got != head+want {
				t.Fatalf("step %d %q: got %q, want %q", step, args, got, head+want)
			}
		}
		if strings.HasPrefix(got, "*"+strconv.Itoa(n+1)+"\r\n:0\r\n") {
			allowed++
			for _, l := range limits {
				c.do(append([]string{"cl.throttle", "t:" + l[0]}, l[1:]...)...)
			}
		} else {
			refused++
		}
		for _, k := range keys {
			a := c.do("get", k) + c.do("pexpiretime", k)
			b := c.do("get", "t:"+k) + c.do("pexpiretime", "t:"+k)
			if a != b {
				t.Fatalf("step %d %q: %s holds %q, its twin %q", step, args, k, a, b)
			}
		}
	}
	if allowed < 50 || refused < 50 {
		t.Errorf("allowed %d, refused %d: the sequence does not exercise both", allowed, refused)
	}
}

// TestThrottleAllSameKey: two limits on one key are decided in order, the
// second on what the first would leave, and the key is charged for both.
func TestThrottleAllSameKey(t *testing.T) {
	srv := startServer(t, nil)
	srv.limiters.fixedNow.Store(time.Now().UnixNano())
	c := dial(t, srv)
	if got := c.do(strings.Fields("cl.throttleall k 2 1 60 1 k 2 1 60 1")...); got != "*3\r\n:0\r\n"+ints(0, 3, 2, -1, 60)+ints(0, 3, 1, -1, 120) {
		t.Errorf("first: %q", got)
	}
	if got := c.do(strings.Fields("cl.throttleall k 2 1 60 1 k 2 1 60 1")...); got != "*3\r\n:1\r\n"+ints(0, 3, 0, -1, 180)+ints(1, 3, 0, 60, 180) {
		t.Errorf("second: %q", got)
	}
	if got := c.do(strings.Fields("cl.throttle k 2 1 60 1")...); got != ints(0, 3, 0, -1, 180) {
		t.Errorf("the refused call charged k: %q", got)
	}
}

func TestThrottleAllCrossSlot(t *testing.T) {
	srv := clusterServer(t)
	c := dial(t, srv)
	for _, tc := range [][]string{
		{"CL.THROTTLEALL b 1 1 1 1 foo 1 1 1 1", "-" + ErrCrossSlot + "\r\n"},
		{"CL.PROBEALL b 1 1 1 1 foo 1 1 1 1", "-" + ErrCrossSlot + "\r\n"},
		{"CL.THROTTLEALL b 1 1 1 1 {b}x 1 1 1 1", "*3\r\n:0\r\n"},
	} {
		if got := c.do(strings.Fields(tc[0])...); !strings.HasPrefix(got, tc[1]) {
			t.Errorf("%s: %q, want %q...", tc[0], got, tc[1])
		}
	}
}

// TestThrottleAllConcurrent: 64 connections call CL.THROTTLEALL (and some
// CL.PROBEALL) over random overlapping sets of 8 keys on different shards,
// each limit a burst of 200 at one unit per 10^6 s, so nothing leaks back
// during the test and a key's TAT is its first charge plus n units for n
// charges. Each key must end charged exactly once per allowed call that
// named it: a refused call that charged a key, or an allowed one that
// missed one, shows as a difference. Each reply is checked per limit too:
// the charges of one key are serialized, so the allowed calls that named
// it must report, between them, remaining 199, 198, ... down to 200 minus
// its charges, each exactly once (CL.THROTTLE's replies for those charges,
// in some order); a refused call must show a limited limit, with its
// retry-after.
func TestThrottleAllConcurrent(t *testing.T) {
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), PoolSize: 64})
	defer rdb.Close()
	const nkeys, period = 8, 1_000_000
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = "ck" + strconv.Itoa(i)
	}
	var mu sync.Mutex
	charged := make([]int64, nkeys)
	remaining := make([][]int64, nkeys) // what the allowed calls reported, per key
	var allowed, refused int64
	var wg sync.WaitGroup
	ctx := context.Background()
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < 60; i++ {
				pick := rng.Perm(nkeys)[:2+rng.Intn(3)]
				cmd := "CL.THROTTLEALL"
				if rng.Intn(5) == 0 {
					cmd = "CL.PROBEALL"
				}
				args := []any{cmd}
				for _, k := range pick {
					args = append(args, keys[k], 199, 1, period, 1)
				}
				r, err := rdb.Do(ctx, args...).Slice()
				if err != nil {
					t.Error(err)
					return
				}
				if len(r) != 1+len(pick) {
					t.Errorf("%v: %v", args, r)
					return
				}
				limited := false
				for i := range pick {
					l, ok := r[1+i].([]any)
					if !ok || len(l) != 5 || l[1].(int64) != 200 {
						t.Errorf("%v: limit %d: %v", args, i, r[1+i])
						return
					}
					if l[0].(int64) == 1 {
						limited = true
						if l[2].(int64) != 0 || l[3].(int64) <= 0 {
							t.Errorf("%v: a limited limit without retry-after: %v", args, l)
						}
					} else if l[3].(int64) != -1 {
						t.Errorf("%v: an allowing limit with a retry-after: %v", args, l)
					}
				}
				if limited != (r[0].(int64) == 1) {
					t.Errorf("%v: whole %v, limits disagree: %v", args, r[0], r)
				}
				mu.Lock()
				if cmd == "CL.THROTTLEALL" && r[0].(int64) == 0 {
					allowed++
					for i, k := range pick {
						charged[k]++
						remaining[k] = append(remaining[k], r[1+i].([]any)[2].(int64))
					}
				} else if cmd == "CL.THROTTLEALL" {
					refused++
				}
				mu.Unlock()
			}
		}(int64(g))
	}
	wg.Wait()
	if allowed == 0 || refused == 0 {
		t.Fatalf("allowed %d, refused %d: the run did not reach the limits", allowed, refused)
	}
	now := time.Now().UnixNano()
	for i, k := range keys {
		tat, err := rdb.Get(ctx, k).Int64()
		if err == redis.Nil {
			tat = 0
		} else if err != nil {
			t.Fatal(err)
		}
		// The first charge was made within the test, minutes at most
		// from now; the rest is whole units of 10^15 ns.
		units := (tat - now + int64(period*time.Second)/2) / int64(period*time.Second)
		if tat == 0 {
			units = 0
		}
		if units != charged[i] || units > 200 {
			t.Errorf("%s: TAT holds %d charges, %d allowed calls named it (burst 200)", k, units, charged[i])
		}
		slices.Sort(remaining[i])
		for j, r := range remaining[i] {
			if want := 200 - int64(len(remaining[i])) + int64(j); r != want {
				t.Errorf("%s: the allowed calls reported remaining %v, want each of %d..199 once", k, remaining[i], 200-len(remaining[i]))
				break
			}
		}
	}
	t.Logf("allowed %d, refused %d, charges %v", allowed, refused, charged)
}
