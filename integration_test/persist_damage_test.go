package integration_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// TestPersistDamagedLog: the built binary takes 10,000 writes under
// appendfsync always and is killed (SIGKILL); one byte of its effect log
// is changed: in the middle of a record, in the segment's header, or at a
// random offset before the last record. The restart must refuse (exit 1,
// naming the file, the offset and the setting); a restart with
// --effectlog-load-damaged skip must serve every key but the damaged
// record's (named in its log) and report that loss in INFO; the
// checkpoint of that start settles it, so a plain start works again.
func TestPersistDamagedLog(t *testing.T) {
	bin := cellserverBinary(t)
	const n = 10000
	for _, where := range []string{"record", "header", "random"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			p := cellOnDir(t, dir, "--appendfsync", "always")
			c := mustDial(t, p)
			for i := 0; i < n; i += 500 {
				for j := i; j < i+500; j++ {
					if err := c.Send("SET", fmt.Sprintf("key:%05d", j), fmt.Sprintf("value-%d", j)); err != nil {
						t.Fatal(err)
					}
				}
				for j := i; j < i+500; j++ {
					if r, err := c.ReadReply(); err != nil || string(r) != "+OK\r\n" {
						t.Fatalf("SET %d: %q %v", j, r, err)
					}
				}
			}
			p.kill()

			path, end := newestSegment(t, dir)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			at := int64(9) // the header's sequence number
			lost := ""
			if where == "random" {
				at = rand.Int64N(end - 100) // not in the last record: that would be a torn tail
				lost = "?"
			}
			if where == "record" {
				// The value of a key about halfway through the log.
				at = int64(bytes.Index(b, []byte("value-5000")))
				if at < 0 {
					t.Fatal("key:05000's record is not in the newest segment")
				}
				at += 7
				lost = "key:05000"
			}
			b[at] ^= 0x10
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}

			// A plain restart refuses.
			sp, err := serverproc.Start(bin, []string{"--bind", "127.0.0.1", "--port", "0", "--dir", dir}, t.TempDir(), false)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-sp.Exited():
			case <-time.After(30 * time.Second):
				sp.Stop()
				t.Fatal("the server started on a log damaged in the middle")
			}
			out, _ := os.ReadFile(sp.LogPath)
			if code := sp.Cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit code %d, want 1:\n%s", code, out)
			}
			for _, s := range []string{filepath.Base(path), "offset", "effectlog-load-damaged skip"} {
				if !bytes.Contains(out, []byte(s)) {
					t.Fatalf("the refusal does not say %q:\n%s", s, out)
				}
			}

			// With skip: every key but the damaged record's, and the loss reported.
			p2 := cellOnDir(t, dir, "--appendfsync", "always", "--effectlog-load-damaged", "skip")
			c2 := mustDial(t, p2)
			var missing []string
			for i := 0; i < n; i++ {
				if err := c2.Send("GET", fmt.Sprintf("key:%05d", i)); err != nil {
					t.Fatal(err)
				}
				if i%500 != 499 {
					continue
				}
				for j := i - 499; j <= i; j++ {
					r, err := c2.ReadReply()
					if err != nil {
						t.Fatal(err)
					}
					want := fmt.Sprintf("value-%d", j)
					switch string(r) {
					case "$" + strconv.Itoa(len(want)) + "\r\n" + want + "\r\n":
					case "$-1\r\n":
						missing = append(missing, fmt.Sprintf("key:%05d", j))
					default:
						t.Fatalf("GET key:%05d = %q", j, r)
					}
				}
			}
			out, _ = os.ReadFile(p2.LogPath)
			if !bytes.Contains(out, []byte("skipping damaged bytes")) {
				t.Fatalf("the skip is not logged:\n%s", out)
			}
			if lost == "?" {
				// One byte damages one record: one key at most.
				if len(missing) > 1 {
					t.Fatalf("missing %v after the skip of one damaged byte", missing)
				}
				lost = strings.Join(missing, " ")
			}
			if strings.Join(missing, " ") != lost {
				t.Fatalf("missing %v after the skip, want %q", missing, lost)
			}
			info := string(mustDo(t, c2, "INFO", "persistence"))
			wantInfo := []string{"aof_last_load_damaged_stretches:1\r\n", "aof_last_load_damaged_records:0\r\n", "aof_last_load_damaged_bytes:32\r\n"}
			switch where {
			case "record":
				wantInfo = []string{"aof_last_load_corrupt_skipped:1\r\n", "aof_last_load_damaged_records:1\r\n", "aof_last_load_damaged_keys:1\r\n"}
			case "random":
				wantInfo = []string{"aof_last_load_damaged_stretches:1\r\n"}
			}
			for _, f := range wantInfo {
				if !strings.Contains(info, f) {
					t.Fatalf("INFO persistence lacks %q:\n%s", f, info)
				}
			}
			t.Logf("byte %d of %d changed (%s): %d of %d keys served after the skip", at, end, where, n-len(missing), n)
			p2.Stop() // SIGTERM: saves, dropping the damaged segment

			p3 := cellOnDir(t, dir)
			if got := string(mustDo(t, mustDial(t, p3), "DBSIZE")); got != ":"+strconv.Itoa(n-len(missing))+"\r\n" {
				t.Fatalf("DBSIZE after a plain restart = %q", got)
			}
		})
	}
}
