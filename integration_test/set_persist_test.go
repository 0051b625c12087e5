package integration_test

import (
	"strconv"
	"testing"
	"time"
)

// TestPersistSetsKill: sets written, changed in place, emptied and
// stored over are read back the same after SIGKILL and a restart, from
// the effect log alone, then from a checkpoint (SAVE) plus the log
// written after it.
func TestPersistSetsKill(t *testing.T) {
	cellserverBinary(t)
	dir := t.TempDir()
	p := cellOnDir(t, dir, "--appendfsync", "always")
	c := mustDial(t, p)
	pxat := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	big := []string{"SADD", "big"}
	for i := range 700 {
		big = append(big, "m"+strconv.Itoa(i))
	}
	ints := []string{"SADD", "ints"}
	for i := range 600 { // past 512: no longer an intset
		ints = append(ints, strconv.Itoa(i*7))
	}
	round := func(n string) [][]string {
		return [][]string{
			{"SADD", "i" + n, "3", "1", "2"}, {"SREM", "i" + n, "2"}, {"PEXPIREAT", "i" + n, pxat},
			{"SADD", "s" + n, "a", "b\x00", "", "c"}, {"SREM", "s" + n, "c"}, {"SPOP", "s" + n, "0"},
			{"SADD", "gone" + n, "x"}, {"SREM", "gone" + n, "x"},
			{"SADD", "mv" + n, "1", "x"}, {"SMOVE", "mv" + n, "dst" + n, "x"},
			{"SINTERSTORE", "st" + n, "i" + n, "mv" + n}, {"SUNIONSTORE", "su" + n, "s" + n, "i" + n},
		}
	}
	reads := func(n string) [][]string {
		return [][]string{
			{"SMEMBERS", "i" + n}, {"OBJECT", "ENCODING", "i" + n}, {"PEXPIRETIME", "i" + n},
			{"SCARD", "s" + n}, {"SMISMEMBER", "s" + n, "a", "b\x00", "", "c"}, {"EXISTS", "gone" + n},
			{"SMEMBERS", "mv" + n}, {"SMEMBERS", "dst" + n}, {"SMEMBERS", "st" + n}, {"SCARD", "su" + n},
			{"SCARD", "big"}, {"SMISMEMBER", "big", "m0", "m1", "m699"}, {"SCARD", "ints"},
			{"OBJECT", "ENCODING", "ints"}, {"SISMEMBER", "ints", "4193"}, {"TYPE", "s" + n},
		}
	}
	for _, cmd := range append(round("1"), big, ints, []string{"SREM", "big", "m1"}, []string{"SPOP", "ints", "10"}) {
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
	// A checkpoint, then more changes in the log after it.
	if got := mustDo(t, c2, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	for _, cmd := range append(round("2"), []string{"SADD", "i1", "99"}, []string{"SREM", "big", "m0"}) {
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
