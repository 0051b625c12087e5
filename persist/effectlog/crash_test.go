package effectlog

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// crashDirEnv, when set, makes the test binary the child of
// TestKillLosesNoAppend instead of running tests.
const crashDirEnv = "EFFECTLOG_CRASH_CHILD_DIR"

// crashSegmentSize is small so that the kill lands among segment switches.
const crashSegmentSize = 16 << 10

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(m.Run())
}

// crashChild appends records until it is killed, printing "i size end"
// for each after Append returned: what it would have acknowledged.
func crashChild(dir string) int {
	l, err := Open(dir, Options{SegmentSize: crashSegmentSize})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; ; i++ {
		size := 20 + i*37%3000
		end, err := l.Append(payloadFor(i, size))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%d %d %d\n", i, size, end) // one write(2): unbuffered
		switch {
		case i%1000 == 999:
			l.Rotate()
		case i%300 == 0:
			l.Sync(end)
		}
	}
}

// TestKillLosesNoAppend SIGKILLs a process in the middle of appending and
// checks that every record whose Append had returned is in the log.
func TestKillLosesNoAppend(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type acked struct{ size, end uint64 }
	var got []acked
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		var i int
		var a acked
		if _, err := fmt.Sscanf(sc.Text(), "%d %d %d", &i, &a.size, &a.end); err != nil || i != len(got) {
			// The kill can cut a line short; anything else is a bug.
			if killed {
				break
			}
			t.Fatalf("child printed %q", sc.Text())
		}
		got = append(got, a)
		if len(got) == 5000 && !killed {
			if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	cmd.Wait()
	if !killed {
		t.Fatalf("the child stopped after %d records", len(got))
	}

	l, lb := openLog(t, dir, crashSegmentSize)
	defer l.Close()
	i := 0
	err = l.Replay(0, func(start uint64, p []byte) error {
		if i < len(got) {
			a := got[i]
			want := payloadFor(i, int(a.size))
			if start+frameHeader+uint64(len(p)) != a.end || string(p) != string(want) {
				return fmt.Errorf("record %d: start %d, %d bytes; child acknowledged end %d, %d bytes", i, start, len(p), a.end, a.size)
			}
		}
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i < len(got) {
		t.Fatalf("log holds %d records, the child acknowledged %d (log: %s)", i, len(got), lb.String())
	}
	t.Logf("child acknowledged %d records, log holds %d", len(got), i)
}
