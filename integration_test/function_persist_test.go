package integration_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFunctionsCrash: the libraries survive SIGKILL as the keys do. A
// client changes them as fast as it can (FUNCTION LOAD [REPLACE],
// DELETE, FLUSH, RESTORE FLUSH) while checkpoints run every few
// kilobytes of log, and the server is killed at a random moment; after
// the restart the libraries are what the last acknowledged change left,
// or that plus the change in flight. Under appendfsync always and
// everysec alike: the log is in the kernel's page cache before the reply.
func TestFunctionsCrash(t *testing.T) {
	cellserverBinary(t)
	for _, policy := range []string{"always", "everysec"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			// acked is each library's version after the last
			// acknowledged change (absent: no such library); next the
			// versions the change in flight would leave.
			acked := map[string]int{}
			changes, checkpoints := 0, 0
			for round := range 4 {
				p := cellOnDir(t, dir, "--appendfsync", policy, "--auto-aof-rewrite-min-size", "4096")
				c := mustDial(t, p)
				checkLibraries(t, c, acked, nil, fmt.Sprintf("round %d start", round))
				var dump string
				var dumped map[string]int // the versions dump holds
				stopAt := time.Now().Add(time.Duration(150+rand.IntN(250)) * time.Millisecond)
				killed := make(chan struct{})
				go func() {
					time.Sleep(time.Until(stopAt))
					p.kill()
					close(killed)
				}()
				var next map[string]int
				for {
					next = copyVersions(acked)
					var cmd []string
					name := fmt.Sprintf("l%d", rand.IntN(4))
					switch r := rand.IntN(20); {
					case r == 0:
						cmd, next = []string{"FUNCTION", "FLUSH"}, map[string]int{}
					case r == 1 && dump != "":
						cmd, next = []string{"FUNCTION", "RESTORE", dump, "FLUSH"}, copyVersions(dumped)
					case r < 5:
						cmd = []string{"FUNCTION", "DELETE", name}
						delete(next, name)
					case r == 5:
						cmd = []string{"FUNCTION", "DUMP"}
					default:
						changes++
						cmd = []string{"FUNCTION", "LOAD", "REPLACE", versionedLib(name, changes)}
						next[name] = changes
					}
					r, err := c.Do(cmd...)
					if err != nil {
						break // killed
					}
					switch {
					case cmd[1] == "DUMP":
						dump, dumped = bulkBody(t, r), copyVersions(acked)
					case r[0] == '-' && cmd[1] == "DELETE":
						// no such library: nothing changed
					case r[0] == '-':
						t.Fatalf("%v: %q", cmd[:2], r)
					default:
						acked = next
					}
				}
				<-killed
				checkpoints += strings.Count(p.LogTail(1000), "persistence: checkpoint")
				p = cellOnDir(t, dir, "--appendfsync", policy)
				acked = checkLibraries(t, mustDial(t, p), acked, next, fmt.Sprintf("round %d", round))
				p.Stop()
			}
			t.Logf("%d libraries loaded and %d checkpoints over the rounds", changes, checkpoints)
			if changes < 20 || checkpoints == 0 {
				t.Fatalf("%d libraries loaded and %d checkpoints over the rounds", changes, checkpoints)
			}
		})
	}
}

func copyVersions(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// versionedLib is library name whose function f_<name> returns version.
func versionedLib(name string, version int) string {
	return fmt.Sprintf("#!lua name=%s\nredis.register_function('f_%s', function() return %d end)", name, name, version)
}

// checkLibraries reads the versions the server's libraries return and
// fails unless they are want's, or alt's (the change in flight); it
// returns the one they are.
func checkLibraries(t *testing.T, c *respConn, want, alt map[string]int, when string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := range 4 {
		name := fmt.Sprintf("l%d", i)
		r, err := c.Do("FCALL", "f_"+name, "0")
		if err != nil {
			t.Fatal(err)
		}
		switch s := string(r); {
		case s == "-ERR Function not found\r\n":
		case s[0] == ':':
			n, _ := strconv.Atoi(s[1 : len(s)-2])
			got[name] = n
		default:
			t.Fatalf("%s: FCALL f_%s: %q", when, name, s)
		}
	}
	if fmt.Sprint(got) == fmt.Sprint(want) {
		return want
	}
	if alt != nil && fmt.Sprint(got) == fmt.Sprint(alt) {
		return alt
	}
	t.Fatalf("%s: libraries %v after the restart, want %v (or %v with the change in flight)", when, got, want, alt)
	return nil
}
