package effectlog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"
)

func TestAppendReplayRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		segSize int64
		sizes   []int
		n       int
		rotate  int // Rotate every rotate records; 0: never
	}{
		{"empty payloads", 4096, []int{0}, 1000, 0},
		{"small across segments", 4096, []int{0, 1, 7, 8, 100, 333, 1000}, 600, 0},
		{"with rotations", 4096, []int{10, 200, 1500}, 300, 17},
		{"larger than a segment", 4096, []int{5000, 3, 4096, 12000, 4056, 4057}, 40, 0},
		{"default segment size", 0, []int{100, 1 << 16, 3}, 300, 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, _ := openLog(t, dir, tc.segSize)
			var want []rec
			for i := 0; i < tc.n; i++ {
				want = append(want, appendRecords(t, l, i, 1, tc.sizes)...)
				if tc.rotate > 0 && i%tc.rotate == tc.rotate-1 {
					lsn, err := l.Rotate()
					if err != nil || lsn != l.End() {
						t.Fatalf("Rotate = %d, %v; End %d", lsn, err, l.End())
					}
				}
				if i%97 == 0 {
					l.Trim()
				}
			}
			end := l.End()
			mustClose(t, l)

			l, lb := openLog(t, dir, tc.segSize)
			defer l.Close()
			if l.End() != end {
				t.Fatalf("End after reopen = %d, want %d", l.End(), end)
			}
			checkRecords(t, replayAll(t, l, 0), want)
			if s := lb.String(); s != "" {
				t.Fatalf("clean reopen logged: %s", s)
			}
		})
	}
}

func TestReplayFrom(t *testing.T) {
	dir := t.TempDir()
	l, _ := openLog(t, dir, 4096)
	want := appendRecords(t, l, 0, 200, []int{50, 700, 0, 2000})
	mustClose(t, l)
	l, _ = openLog(t, dir, 4096)
	defer l.Close()
	for _, from := range []uint64{0, want[1].start, want[77].start, want[77].start + 1, want[199].start, l.End(), l.End() + 100} {
		var exp []rec
		for _, r := range want {
			if r.start >= from {
				exp = append(exp, r)
			}
		}
		checkRecords(t, replayAll(t, l, from), exp)
	}
	stop := errors.New("stop")
	calls := 0
	err := l.Replay(0, func(uint64, []byte) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 3 {
		t.Fatalf("Replay with fn failing at the 3rd record: %v after %d calls", err, calls)
	}
}

func TestConcurrentAppend(t *testing.T) {
	const writers, each = 8, 400
	dir := t.TempDir()
	l, _ := openLog(t, dir, 8192)
	var wg sync.WaitGroup
	ends := make([][]uint64, writers)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for s := 0; s < each; s++ {
				p := []byte(fmt.Sprintf("%d/%d/%s", g, s, strings.Repeat("x", (g*31+s)%300)))
				end, err := l.Append(p)
				if err != nil {
					t.Error(err)
					return
				}
				ends[g] = append(ends[g], end)
				if s%50 == 0 {
					if err := l.Sync(end); err != nil {
						t.Error(err)
					}
				}
			}
		}(g)
	}
	wg.Wait()
	mustClose(t, l)

	l, _ = openLog(t, dir, 8192)
	defer l.Close()
	next := make([]int, writers)
	n := 0
	err := l.Replay(0, func(start uint64, p []byte) error {
		var g, s int
		if _, err := fmt.Sscanf(string(p), "%d/%d/", &g, &s); err != nil {
			return fmt.Errorf("record %q: %v", p, err)
		}
		if g < 0 || g >= writers || s != next[g] {
			return fmt.Errorf("record %q: want sequence %d of writer %d", p, next[g], g)
		}
		if want := ends[g][s]; start+uint64(frameHeader+len(p)) != want {
			return fmt.Errorf("record %q ends at %d, Append said %d", p, start+uint64(frameHeader+len(p)), want)
		}
		next[g]++
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != writers*each {
		t.Fatalf("replayed %d records, want %d", n, writers*each)
	}
}

func TestReopenContinues(t *testing.T) {
	dir := t.TempDir()
	var want []rec
	for round := 0; round < 4; round++ {
		l, _ := openLog(t, dir, 4096)
		if round > 0 && l.End() != want[len(want)-1].start+uint64(frameHeader+len(want[len(want)-1].payload)) {
			t.Fatalf("round %d: End %d does not follow the last record", round, l.End())
		}
		checkRecords(t, replayAll(t, l, 0), want)
		want = append(want, appendRecords(t, l, len(want), 30+round*40, []int{90, 300})...)
		mustClose(t, l)
	}
}

func TestSyncSynced(t *testing.T) {
	dir := t.TempDir()
	l, _ := openLog(t, dir, 4096)
	defer l.Close()
	if !l.Synced(l.End()) {
		t.Fatal("a fresh log is not synced")
	}
	var ends []uint64
	for i := 0; i < 50; i++ {
		ends = append(ends, mustAppend(t, l, payloadFor(i, 150)))
	}
	if l.Synced(ends[0]) {
		t.Fatal("Synced before any Sync")
	}
	if err := l.Sync(ends[20]); err != nil {
		t.Fatal(err)
	}
	if !l.Synced(ends[20]) || !l.Synced(ends[49]) {
		t.Fatal("Sync did not cover every record appended before it")
	}
	rounds := l.syncRounds.Load()
	if err := l.Sync(ends[30]); err != nil || l.syncRounds.Load() != rounds {
		t.Fatalf("Sync of a synced LSN: %v, %d fsync rounds (want none)", err, l.syncRounds.Load()-rounds)
	}

	// Group commit: callers waiting together are served by one round.
	for i := 0; i < 40; i++ {
		ends = append(ends, mustAppend(t, l, payloadFor(i, 3000)))
	}
	rounds = l.syncRounds.Load()
	var wg sync.WaitGroup
	for _, e := range ends[50:] {
		wg.Add(1)
		go func(e uint64) {
			defer wg.Done()
			if err := l.Sync(e); err != nil {
				t.Error(err)
			}
		}(e)
	}
	wg.Wait()
	if got := l.syncRounds.Load() - rounds; got != 1 {
		t.Fatalf("40 concurrent Syncs of appended records took %d fsync rounds, want 1", got)
	}
	if !l.Synced(l.End()) || l.Err() != nil {
		t.Fatalf("after Sync: Synced %v, Err %v", l.Synced(l.End()), l.Err())
	}
}

func TestSize(t *testing.T) {
	l, _ := openLog(t, t.TempDir(), 4096)
	defer l.Close()
	a := mustAppend(t, l, make([]byte, 100))
	b := mustAppend(t, l, make([]byte, 4000)) // moves to the next segment
	for _, tc := range []struct {
		since uint64
		want  int64
	}{{0, int64(b)}, {a, int64(b - a)}, {b, 0}, {b + 10, 0}} {
		if got := l.Size(tc.since); got != tc.want {
			t.Errorf("Size(%d) = %d, want %d", tc.since, got, tc.want)
		}
	}
	if b != a+4008 {
		t.Fatalf("a record moving to a new segment: end %d, want %d (LSNs contiguous)", b, a+4008)
	}
}

func TestDropBefore(t *testing.T) {
	dir := t.TempDir()
	l, _ := openLog(t, dir, 4096)
	want := appendRecords(t, l, 0, 60, []int{500}) // 8 records per segment
	if n := len(segmentFiles(t, dir)); n < 7 {
		t.Fatalf("%d segment files, want at least 7", n)
	}
	mid := want[30].start
	before := segmentFiles(t, dir)
	wholeBefore := 0
	for _, s := range l.segs[:len(l.segs)-1] {
		if s.end <= mid {
			wholeBefore++
		}
	}
	if err := l.DropBefore(mid); err != nil {
		t.Fatal(err)
	}
	after := segmentFiles(t, dir)
	if wholeBefore == 0 || len(after) != len(before)-wholeBefore || after[0] != before[wholeBefore] {
		t.Fatalf("DropBefore(%d): files %v -> %v, want the %d oldest deleted", mid, before, after, wholeBefore)
	}
	if s := l.segs[0]; s.base > mid || s.end <= mid {
		t.Fatalf("after DropBefore(%d) the oldest segment is [%d, %d), want the one holding it", mid, s.base, s.end)
	}
	lsn, err := l.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.DropBefore(lsn); err != nil {
		t.Fatal(err)
	}
	if again, err := l.Rotate(); again != lsn || err != nil {
		t.Fatalf("Rotate of an empty segment = %d, %v; want %d (no new segment)", again, err, lsn)
	}
	if got := segmentFiles(t, dir); len(got) != 1 { // the prepared next segment was consumed by Rotate
		t.Fatalf("after Rotate + DropBefore(End): files %v, want only the current segment", got)
	}
	if err := l.DropBefore(l.End() + 1000); err != nil || len(segmentFiles(t, dir)) != 1 {
		t.Fatalf("DropBefore past End deleted the current segment (%v)", err)
	}
	more := appendRecords(t, l, 60, 5, []int{100})
	mustClose(t, l)

	if _, err := Open(dir, Options{SegmentSize: 4096}); err == nil {
		t.Fatal("Open from 0 of a log that starts later succeeded: the records before its start are missing")
	}
	lb := &logBuffer{}
	l, err = Open(dir, Options{SegmentSize: 4096, From: lsn, Logger: slog.New(slog.NewTextHandler(lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkRecords(t, replayAll(t, l, lsn), more)
	if s := lb.String(); s != "" {
		t.Fatalf("reopen after DropBefore logged: %s", s)
	}
}

func TestClosed(t *testing.T) {
	dir := t.TempDir()
	l, _ := openLog(t, dir, 4096)
	if _, err := Open(dir, Options{}); err == nil {
		t.Fatal("a second Open of the same directory succeeded")
	}
	mustAppend(t, l, []byte("x"))
	mustClose(t, l)
	if _, err := l.Append([]byte("y")); err != ErrClosed {
		t.Errorf("Append after Close: %v", err)
	}
	if err := l.Sync(l.End()); err != ErrClosed {
		t.Errorf("Sync after Close: %v", err)
	}
	if _, err := l.Rotate(); err != ErrClosed {
		t.Errorf("Rotate after Close: %v", err)
	}
	if err := l.DropBefore(0); err != ErrClosed {
		t.Errorf("DropBefore after Close: %v", err)
	}
	if err := l.Replay(0, func(uint64, []byte) error { return nil }); err != ErrClosed {
		t.Errorf("Replay after Close: %v", err)
	}
	if err := l.Close(); err != ErrClosed {
		t.Errorf("second Close: %v", err)
	}
	l.Trim()
}

// TestErrOnSegmentCreation puts a file where the log's directory was, so
// that creating a segment fails whoever runs the test (root included).
func TestErrOnSegmentCreation(t *testing.T) {
	dir := t.TempDir() + "/log"
	l, _ := openLog(t, dir, 4096)
	defer l.Close()
	want := appendRecords(t, l, 0, 3, []int{100})
	big := payloadFor(99, 5000) // larger than a segment: always a segment created now

	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	end := l.End()
	for i := 0; i < 2; i++ {
		if _, err := l.Append(big); err == nil {
			t.Fatal("Append needing a new segment succeeded with no directory")
		}
		if l.Err() == nil || l.End() != end {
			t.Fatalf("after a failed Append: Err %v, End %d (want %d)", l.Err(), l.End(), end)
		}
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	want = append(want, appendRecords(t, l, 99, 1, []int{5000})...)
	want = append(want, appendRecords(t, l, 4, 3, []int{100})...)
	if l.Err() != nil {
		t.Fatalf("Err after a segment was created again: %v", l.Err())
	}
	if err := l.Sync(l.End()); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	l, _ = openLog(t, dir, 4096)
	defer l.Close()
	checkRecords(t, replayAll(t, l, 0), want)
}

// TestSyncError makes fdatasync fail by closing the current segment's file
// under the log: Sync must return the error, keep it in Err and not
// advance Synced, until a Sync succeeds again.
func TestSyncError(t *testing.T) {
	dir := t.TempDir()
	l, _ := openLog(t, dir, 4096)
	end := mustAppend(t, l, payloadFor(1, 100))
	l.cur.f.Close()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ { // every caller sees the failure, waiters of a round included
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Sync(end); err == nil {
				t.Error("Sync succeeded with its file closed")
			}
		}()
	}
	wg.Wait()
	for i := 0; i < 2; i++ {
		if err := l.Sync(end); err == nil {
			t.Fatal("Sync succeeded with its file closed")
		}
		if l.Err() == nil || l.Synced(end) {
			t.Fatalf("after a failed Sync: Err %v, Synced %v", l.Err(), l.Synced(end))
		}
	}
	f, err := os.OpenFile(l.cur.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	l.cur.f = f
	if err := l.Sync(end); err != nil || l.Err() != nil || !l.Synced(end) {
		t.Fatalf("Sync once the file works: %v, Err %v, Synced %v", err, l.Err(), l.Synced(end))
	}
	mustClose(t, l)
}

// TestAppendStateLine: appendState fills exactly one 64-byte cache line,
// and the allocator gives such objects 64-byte alignment, so Append's
// fields share their line with nothing else.
func TestAppendStateLine(t *testing.T) {
	if n := unsafe.Sizeof(appendState{}); n != 64 {
		t.Fatalf("appendState is %d bytes", n)
	}
	for range 100 {
		appendStateSink = &appendState{} // on the heap, as Open's
		if a := uintptr(unsafe.Pointer(appendStateSink)); a%64 != 0 {
			t.Fatalf("appendState at %#x", a)
		}
	}
}

var appendStateSink *appendState

// TestOpenFullDisk: a log reopened on a disk that cannot give it blocks
// ahead of its records opens all the same, with a warning, for the server
// to serve reads; Append fails until the disk has room, then goes on, and
// nothing is lost.
func TestOpenFullDisk(t *testing.T) {
	dir := t.TempDir()
	l, _ := openLog(t, dir, 1<<20)
	want := appendRecords(t, l, 0, 50, []int{10, 300})
	mustClose(t, l)

	var full atomic.Bool
	full.Store(true)
	lb := &logBuffer{}
	l, err := Open(dir, Options{SegmentSize: 1 << 20, Logger: slog.New(slog.NewTextHandler(lb, nil)), Fault: func(op string) error {
		if op == "create" && full.Load() {
			return syscall.ENOSPC
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("Open on a full disk: %v", err)
	}
	defer l.Close()
	if !strings.Contains(lb.String(), "no room to reserve blocks") {
		t.Fatalf("no warning; log:\n%s", lb.String())
	}
	checkRecords(t, replayAll(t, l, 0), want)
	if _, err := l.Append(payloadFor(50, 10)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append on the full disk: %v", err)
	}
	full.Store(false)
	want = append(want, appendRecords(t, l, 50, 20, []int{10, 300})...)
	mustClose(t, l)
	l, _ = openLog(t, dir, 1<<20)
	defer l.Close()
	checkRecords(t, replayAll(t, l, 0), want)
}

// TestCreateErrFromLatestAttempt: Err reports the outcome of the attempt
// to reserve blocks that began last, not of the one that finished last. A
// background reservation that failed while the disk was full can finish
// after a later one found room (TestSegmentBlocksFollowWrites saw it once
// in CI); it must not leave Err reporting a full disk.
func TestCreateErrFromLatestAttempt(t *testing.T) {
	l, _ := openLog(t, t.TempDir(), 1<<20)
	defer mustClose(t, l)
	stale, fresh := l.beginCreate(), l.beginCreate()
	l.noteCreate(fresh, nil)
	l.noteCreate(stale, syscall.ENOSPC)
	if err := l.Err(); err != nil {
		t.Fatalf("Err after a later attempt succeeded: %v", err)
	}
	failed := l.beginCreate()
	l.noteCreate(failed, syscall.ENOSPC)
	if err := l.Err(); err != syscall.ENOSPC {
		t.Fatalf("Err after the latest attempt failed: %v", err)
	}
	l.noteCreate(l.beginCreate(), nil)
	if err := l.Err(); err != nil {
		t.Fatalf("Err once an attempt succeeded again: %v", err)
	}
}
