package effectlog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openWith opens dir with o, logging into the returned buffer.
func openWith(dir string, o Options) (*Log, *logBuffer, error) {
	lb := &logBuffer{}
	o.Logger = slog.New(slog.NewTextHandler(lb, nil))
	l, err := Open(dir, o)
	return l, lb, err
}

// readFiles is every segment file's content, by name.
func readFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range segmentFiles(t, dir) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// without is recs less the records at the given indexes.
func without(recs []rec, drop ...int) []rec {
	var out []rec
	for i, r := range recs {
		gone := false
		for _, d := range drop {
			gone = gone || d == i
		}
		if !gone {
			out = append(out, r)
		}
	}
	return out
}

// TestMidLogDamage damages the middle of a log. Open must refuse, naming
// the file and offset and changing nothing; with SkipDamaged it must give
// back every record but the damaged ones, report the loss, keep doing so
// until the segments are dropped, and append after the last record.
func TestMidLogDamage(t *testing.T) {
	type layout struct{ n, size int } // records of size bytes, segments of 4096
	one := layout{10, 200}            // one segment, records of 208 bytes
	five := layout{20, 1000}          // five segments of four records of 1008 bytes
	tests := []struct {
		name    string
		lay     layout
		drop    []int  // records lost
		file    int    // the segment file the error names
		offset  int64  // and the offset; -1: not checked
		records int    // Records of the first Damage
		kind    string // "", "header" or "gap"
		hurt    damage
	}{
		{"3rd record's payload changed", one, []int{2}, 0, headerSize + 2*208, 1, "", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[0], recordOffset(r[2])+frameHeader+3)
		}},
		{"3rd record's checksum changed", one, []int{2}, 0, headerSize + 2*208, 1, "", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[0], recordOffset(r[2])+5)
		}},
		{"impossible length in the 4th", one, []int{3}, 0, headerSize + 3*208, 0, "", func(t *testing.T, r []rec, s []string) {
			patchFile(t, s[0], recordOffset(r[3]), le32(3))
		}},
		{"length past the segment in the 4th", one, []int{3}, 0, headerSize + 3*208, 0, "", func(t *testing.T, r []rec, s []string) {
			patchFile(t, s[0], recordOffset(r[3]), le32(1<<30))
		}},
		{"length of the 4th pointing at the 6th", one, []int{3}, 0, headerSize + 3*208, 0, "", func(t *testing.T, r []rec, s []string) {
			patchFile(t, s[0], recordOffset(r[3]), le32(2*208))
		}},
		{"4th record's length zeroed", one, []int{3}, 0, headerSize + 3*208, 0, "", func(t *testing.T, r []rec, s []string) {
			patchFile(t, s[0], recordOffset(r[3]), le32(0))
		}},
		{"4th record zeroed", one, []int{3}, 0, headerSize + 3*208, 0, "", func(t *testing.T, r []rec, s []string) {
			patchFile(t, s[0], recordOffset(r[3]), make([]byte, 208))
		}},
		{"4th and 5th records changed", one, []int{3, 4}, 0, headerSize + 3*208, 0, "", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[0], recordOffset(r[3])+100)
			flipByte(t, s[0], recordOffset(r[4])+100)
		}},
		{"2nd and 8th records changed", one, []int{1, 7}, 0, headerSize + 208, 1, "", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[0], recordOffset(r[1])+100)
			flipByte(t, s[0], recordOffset(r[7])+100)
		}},
		{"record in the 3rd segment", five, []int{9}, 2, headerSize + 1008, 1, "", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[2], headerSize+frameHeader+7+1008)
		}},
		{"last record of the 2nd segment", five, []int{7}, 1, headerSize + 3*1008, 1, "", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[1], headerSize+3*1008+500)
		}},
		{"header of the 4th segment zeroed", five, nil, 3, 0, 0, "header", func(t *testing.T, r []rec, s []string) {
			patchFile(t, s[3], 0, make([]byte, headerSize))
		}},
		{"base in the header of the 4th segment", five, nil, 3, 0, 0, "header", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[3], 17)
		}},
		{"header of the 1st segment", five, nil, 0, 0, 0, "header", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[0], 9)
		}},
		{"header of the last segment", five, nil, 4, 0, 0, "header", func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[4], 2)
		}},
		{"4th segment missing", five, []int{12, 13, 14, 15}, 2, -1, 0, "gap", func(t *testing.T, r []rec, s []string) {
			if err := os.Remove(s[3]); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, _ := openLog(t, dir, 4096)
			recs := appendRecords(t, l, 0, tc.lay.n, []int{tc.lay.size})
			mustClose(t, l)
			segs := segmentFiles(t, dir)
			tc.hurt(t, recs, segs)
			before := readFiles(t, dir)

			_, _, err := openWith(dir, Options{SegmentSize: 4096})
			var de *DamageError
			if !errors.As(err, &de) {
				t.Fatalf("Open = %v, want a *DamageError", err)
			}
			d := de.Damage[0]
			if d.File != segs[tc.file] || tc.offset >= 0 && d.Offset != tc.offset || d.Records != tc.records ||
				d.Header != (tc.kind == "header") || d.Gap != (tc.kind == "gap") {
				t.Fatalf("first damage %+v, want file %s offset %d records %d %s", d, segs[tc.file], tc.offset, tc.records, tc.kind)
			}
			if msg := err.Error(); !strings.Contains(msg, d.File) || !strings.Contains(msg, fmt.Sprintf("offset %d", d.Offset)) {
				t.Fatalf("error %q names neither file nor offset", msg)
			}
			if !sameFiles(before, readFiles(t, dir)) {
				t.Fatal("a refused Open changed the files")
			}

			want := without(recs, tc.drop...)
			l, lb, err := openWith(dir, Options{SegmentSize: 4096, SkipDamaged: true})
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, replayAll(t, l, 0), want)
			if len(l.Damaged()) != len(de.Damage) || !strings.Contains(lb.String(), "skipping damaged bytes") {
				t.Fatalf("SkipDamaged: Damaged %+v (refusal: %+v), logged %q", l.Damaged(), de.Damage, lb.String())
			}
			var lost int64
			for _, d := range l.Damaged() {
				lost += d.Bytes
			}
			if wantLost := int64(len(tc.drop) * (frameHeader + tc.lay.size)); tc.kind != "header" && lost != wantLost {
				t.Fatalf("damage reported %d bytes, want %d", lost, wantLost)
			}
			more := appendRecords(t, l, 100, 3, []int{tc.lay.size})
			mustClose(t, l)
			want = append(want, more...)

			// A rebuilt header is rewritten; other damage stays until a
			// checkpoint drops its segment.
			if l, _, err := openWith(dir, Options{SegmentSize: 4096}); err == nil {
				l.Close()
				if tc.kind != "header" {
					t.Fatal("damage skipped once is accepted without SkipDamaged before a checkpoint dropped it")
				}
			}
			l, _, err = openWith(dir, Options{SegmentSize: 4096, SkipDamaged: true})
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, replayAll(t, l, 0), want)
			// A checkpoint drops the damaged segments: the log is whole again.
			if err := l.DropBefore(more[0].start); err != nil {
				t.Fatal(err)
			}
			mustClose(t, l)
			l, lb, err = openWith(dir, Options{SegmentSize: 4096, From: more[0].start})
			if err != nil && tc.lay == five {
				t.Fatalf("Open after the damaged segments were dropped: %v", err)
			}
			if err == nil {
				defer l.Close()
				checkRecords(t, replayAll(t, l, more[0].start), more)
				if lb.String() != "" {
					t.Fatalf("Open after the damaged segments were dropped logged %q", lb.String())
				}
			}
		})
	}
}

// TestRandomDamage flips a bit or changes a byte at random offsets of the
// segment files of a log (headers, records, the unused space after them)
// and checks that every trial ends in one of two ways: Open refuses with
// a *DamageError naming the damaged file and changes nothing, or it opens
// with every record but the damaged one, which is then the log's last (a
// torn tail). Under SkipDamaged, Replay must give every record but the
// one the damage hit, and Damaged must account for it.
func TestRandomDamage(t *testing.T) {
	trials := 400
	if testing.Short() {
		trials = 50
	}
	seed := int64(rand.Uint32())
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	var refused, torn, harmless int
	for trial := 0; trial < trials; trial++ {
		dir := t.TempDir()
		l, _ := openLog(t, dir, 4096)
		recs := appendRecords(t, l, 0, 30, []int{0, 40, 300, 900, 7})
		mustClose(t, l)
		segs := segmentFiles(t, dir)
		// Where each record lies: file and offset range.
		type place struct {
			file     int
			from, to int64
		}
		bases := make([]uint64, len(segs))
		for i, p := range segs {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			_, base, ok := readHeader(b)
			if !ok {
				t.Fatalf("segment %s unreadable before any damage", p)
			}
			bases[i] = base
		}
		places := make([]place, len(recs))
		for i, r := range recs {
			f := len(segs) - 1
			for f > 0 && bases[f] > r.start {
				f--
			}
			from := headerSize + int64(r.start-bases[f])
			places[i] = place{f, from, from + int64(frameHeader+len(r.payload))}
		}
		// The damage: a file, an offset in what it holds (or just past).
		fi := rng.Intn(len(segs))
		b, _ := os.ReadFile(segs[fi])
		limit := int64(nonzeroEnd(b)) + 64
		off := rng.Int63n(min(limit, int64(len(b))))
		v := b[off] ^ byte(1<<rng.Intn(8))
		if rng.Intn(2) == 0 {
			v = byte(rng.Intn(256))
			if v == b[off] {
				v++
			}
		}
		patchFile(t, segs[fi], off, []byte{v})
		hit := -1
		for i, p := range places {
			if p.file == fi && off >= p.from && off < p.to {
				hit = i
			}
		}
		what := fmt.Sprintf("trial %d (seed %d): byte %d of %s (record %d) set to %#x", trial, seed, off, filepath.Base(segs[fi]), hit, v)
		before := readFiles(t, dir)

		l, lb, err := openWith(dir, Options{SegmentSize: 4096})
		var de *DamageError
		switch {
		case errors.As(err, &de):
			refused++
			if de.Damage[0].File != segs[fi] || !strings.Contains(err.Error(), segs[fi]) {
				t.Fatalf("%s: refused naming %v", what, err)
			}
			if !sameFiles(before, readFiles(t, dir)) {
				t.Fatalf("%s: a refused Open changed the files", what)
			}
			if hit == len(recs)-1 {
				t.Fatalf("%s: refused for damage in the last record (a torn tail)", what)
			}
		case err != nil:
			t.Fatalf("%s: Open: %v", what, err)
		default:
			got := replayAll(t, l, 0)
			mustClose(t, l)
			switch hit {
			case -1:
				harmless++
				if off < headerSize {
					t.Fatalf("%s: a damaged header went unnoticed", what)
				}
				checkRecords(t, got, recs)
			case len(recs) - 1:
				torn++
				checkRecords(t, got, recs[:hit])
				if !strings.Contains(lb.String(), "cut damaged log tail") {
					t.Fatalf("%s: torn tail cut without a log line: %q", what, lb.String())
				}
			default:
				t.Fatalf("%s: opened without refusing (replayed %d of %d records)", what, len(got), len(recs))
			}
			continue
		}

		l, _, err = openWith(dir, Options{SegmentSize: 4096, SkipDamaged: true})
		if err != nil {
			t.Fatalf("%s: Open with SkipDamaged: %v", what, err)
		}
		want := recs
		if hit >= 0 {
			want = without(recs, hit)
		}
		checkRecords(t, replayAll(t, l, 0), want)
		var lost int64
		for _, d := range l.Damaged() {
			lost += d.Bytes
		}
		if hit >= 0 && lost < places[hit].to-places[hit].from {
			t.Fatalf("%s: %d bytes reported lost, the record had %d", what, lost, places[hit].to-places[hit].from)
		}
		mustClose(t, l)
	}
	t.Logf("%d trials: %d refused, %d torn tails cut, %d harmless", trials, refused, torn, harmless)
	if refused == 0 {
		t.Fatal("no trial damaged the middle of the log")
	}
}

// TestDamageBeforeFrom: damage the snapshot made moot (wholly before
// Options.From) does not stop a start: a damaged record in a segment a
// checkpoint has yet to drop, and an old segment a machine crash brought
// back after DropBefore had deleted it and the one after it.
func TestDamageBeforeFrom(t *testing.T) {
	dir := t.TempDir()
	l, _ := openLog(t, dir, 4096)
	appendRecords(t, l, 0, 3, []int{300})
	if _, err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, l, 3, 3, []int{300})
	from, err := l.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	more := appendRecords(t, l, 6, 3, []int{300})
	mustClose(t, l)
	segs := segmentFiles(t, dir)
	if len(segs) != 3 {
		t.Fatalf("segments %v, want 3", segs)
	}
	flipByte(t, segs[1], headerSize+frameHeader+100) // a record before from

	l, lb, err := openWith(dir, Options{SegmentSize: 4096, From: from})
	if err != nil {
		t.Fatalf("Open with the damage before From: %v", err)
	}
	checkRecords(t, replayAll(t, l, from), more)
	if len(l.Damaged()) != 0 || lb.String() != "" {
		t.Fatalf("damage before From reported: %+v, logged %q", l.Damaged(), lb.String())
	}
	mustClose(t, l)

	// A checkpoint deleted the first two; a crash brought the first back.
	first, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range segs[:2] {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(segs[0], first, 0o644); err != nil {
		t.Fatal(err)
	}
	l, lb, err = openWith(dir, Options{SegmentSize: 4096, From: from})
	if err != nil {
		t.Fatalf("Open with a gap before From: %v", err)
	}
	checkRecords(t, replayAll(t, l, from), more)
	if len(l.Damaged()) != 0 || lb.String() != "" {
		t.Fatalf("gap before From reported: %+v, logged %q", l.Damaged(), lb.String())
	}
	mustClose(t, l)
	// The same gap before a snapshot older than it is missing records.
	var de *DamageError
	if _, _, err := openWith(dir, Options{SegmentSize: 4096}); !errors.As(err, &de) || !de.Damage[0].Gap {
		t.Fatalf("Open from 0 over the gap = %v, want missing records", err)
	}
}
