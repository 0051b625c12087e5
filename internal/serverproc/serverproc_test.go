package serverproc

import (
	"errors"
	"testing"
	"time"
)

// TestStartStop: a process that would run for a minute is alive until Stop,
// which ends it by SIGTERM; one that exits by itself shows its status and
// its output.
func TestStartStop(t *testing.T) {
	p, err := Start("/bin/sh", []string{"-c", "sleep 60"}, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("not alive after Start")
	}
	p.Stop()
	p.Stop() // twice is harmless
	if p.Alive() || p.Err() == nil {
		t.Fatalf("after Stop: alive=%v err=%v", p.Alive(), p.Err())
	}

	p, err = Start("/bin/sh", []string{"-c", "echo one; echo two; echo three; exit 3"}, t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		p.Stop()
		t.Fatal("did not exit")
	}
	if got := p.LogTail(2); got != "two\nthree" {
		t.Errorf("LogTail(2) = %q", got)
	}
	err = p.WaitReady("127.0.0.1:1", time.Second, func(string) error { return errors.New("no") })
	if err == nil {
		t.Error("WaitReady succeeded on an exited process")
	}
}

// TestWaitReady gives up after its timeout and succeeds once ping does.
func TestWaitReady(t *testing.T) {
	p, err := Start("/bin/sh", []string{"-c", "sleep 60"}, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if err := p.WaitReady("x", 50*time.Millisecond, func(string) error { return errors.New("no") }); err == nil {
		t.Error("WaitReady succeeded though ping never did")
	}
	calls := 0
	ping := func(string) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	}
	if err := p.WaitReady("x", 5*time.Second, ping); err != nil || calls != 3 {
		t.Errorf("WaitReady = %v after %d pings, want nil after 3", err, calls)
	}
	if port, err := FreePort(); err != nil || port <= 0 {
		t.Errorf("FreePort = %d, %v", port, err)
	}
}
