package integration_test

import (
	"strconv"
	"testing"
	"time"
)

// TestPersistBitmapsKill: bitmaps written by SETBIT, BITFIELD and BITOP,
// small and large, with and without a TTL, and the lists SORT ... STORE
// wrote, are read back the same after
// SIGKILL and a restart, from the effect log alone, then from a
// checkpoint (SAVE) plus the log written after it.
func TestPersistBitmapsKill(t *testing.T) {
	cellserverBinary(t)
	dir := t.TempDir()
	p := cellOnDir(t, dir, "--appendfsync", "always")
	c := mustDial(t, p)
	pxat := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	round := func(n string) [][]string {
		return [][]string{
			{"SETBIT", "b" + n, "7", "1"}, {"SETBIT", "b" + n, "1000", "1"}, {"SETBIT", "b" + n, "7", "0"},
			{"SETBIT", "big" + n, "8000000", "1"}, {"SETBIT", "big" + n, "12", "1"}, {"PEXPIREAT", "big" + n, pxat},
			{"BITFIELD", "f" + n, "SET", "i16", "#3", "-300", "INCRBY", "u8", "4", "200", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"},
			{"SET", "s" + n, "12345"}, {"SETBIT", "s" + n, "3", "1"}, {"BITFIELD", "s" + n, "INCRBY", "u4", "0", "3"},
			{"BITOP", "OR", "or" + n, "b" + n, "f" + n}, {"BITOP", "NOT", "not" + n, "s" + n},
			{"SETBIT", "gone" + n, "3", "1"}, {"BITOP", "AND", "gone" + n, "missing"},
			{"RPUSH", "l" + n, "3", "1", "2"}, {"SORT", "l" + n, "DESC", "STORE", "sorted" + n},
			{"SORT", "l" + n, "GET", "missing*", "STORE", "gets" + n},
		}
	}
	reads := func(n string) [][]string {
		return [][]string{
			{"GET", "b" + n}, {"BITCOUNT", "big" + n}, {"STRLEN", "big" + n}, {"BITPOS", "big" + n, "1", "1"},
			{"PEXPIRETIME", "big" + n}, {"GET", "f" + n}, {"GET", "s" + n},
			{"GET", "or" + n}, {"GET", "not" + n}, {"EXISTS", "gone" + n},
			{"LRANGE", "sorted" + n, "0", "-1"}, {"LRANGE", "gets" + n, "0", "-1"},
		}
	}
	for _, cmd := range round("1") {
		mustDo(t, c, cmd...)
	}
	var want []string
	for _, r := range reads("1") {
		want = append(want, mustDo(t, c, r...))
	}
	p.kill()
	p2 := cellOnDir(t, dir, "--appendfsync", "always")
	c2 := mustDial(t, p2)
	for i, r := range reads("1") {
		if got := mustDo(t, c2, r...); got != want[i] {
			t.Errorf("%q after SIGKILL: %q, before: %q", r, got, want[i])
		}
	}
	if got := mustDo(t, c2, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	for _, cmd := range append(round("2"), []string{"SETBIT", "big1", "9000000", "1"}, []string{"BITFIELD", "b1", "SET", "u8", "#0", "255"}) {
		mustDo(t, c2, cmd...)
	}
	all := append(reads("1"), reads("2")...)
	want = want[:0]
	for _, r := range all {
		want = append(want, mustDo(t, c2, r...))
	}
	p2.kill()
	p3 := cellOnDir(t, dir)
	c3 := mustDial(t, p3)
	for i, r := range all {
		if got := mustDo(t, c3, r...); got != want[i] {
			t.Errorf("%q after a checkpoint and SIGKILL: %q, before: %q", r, got, want[i])
		}
	}
}
