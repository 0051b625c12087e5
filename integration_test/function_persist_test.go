package integration_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
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

// TestFunctionsRestart: libraries with several functions and flags are
// what redis-server shows, byte for byte, after cellserver restarts from
// its own data: after SIGTERM, after SIGKILL, and after FUNCTION RESTORE
// of redis-server's own DUMP payload. redis-server keeps running as the
// reference.
func TestFunctionsRestart(t *testing.T) {
	ref := mustDial(t, sharedServers(t).redis)
	dir := t.TempDir()
	p := cellOnDir(t, dir)
	cell := mustDial(t, p)
	second := "#!lua name=second\nredis.register_function{function_name='ro2', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes', 'allow-stale'}, description='second'}\n" +
		"redis.register_function('w2', function(keys, args) return redis.call('incrby', keys[1], args[1]) end)"
	queries := [][]string{
		{"FUNCTION", "LIST", "LIBRARYNAME", "mylib", "WITHCODE"},
		{"FUNCTION", "LIST", "LIBRARYNAME", "second", "WITHCODE"},
		{"FCALL", "setit", "1", "fk", "v"}, {"FCALL_RO", "getit", "1", "fk"}, {"FCALL", "double", "0", "21"},
		{"FCALL", "ro", "0"}, {"FCALL", "w2", "1", "fn", "5"}, {"FCALL_RO", "ro2", "1", "fn"}, {"FCALL_RO", "w2", "1", "fn", "1"},
		{"FCALL", "nosuch", "0"},
	}
	compare := func(when string) {
		t.Helper()
		for _, q := range queries {
			want, got := mustDo(t, ref, q...), mustDo(t, cell, q...)
			if q[0] == "FUNCTION" {
				want, got = functionsInOrder(t, want), functionsInOrder(t, got)
			}
			if got != want {
				t.Errorf("%s: %q:\n cellserver %q\n redis      %q", when, q, got, want)
			}
		}
	}
	change := func(cmd ...string) {
		t.Helper()
		if want, got := mustDo(t, ref, cmd...), mustDo(t, cell, cmd...); got != want {
			t.Fatalf("%q: cellserver %q, redis %q", cmd, got, want)
		}
	}
	mustDo(t, ref, "FUNCTION", "FLUSH")
	mustDo(t, ref, "DEL", "fk", "fn")
	change("FUNCTION", "LOAD", testLibrary)
	change("FUNCTION", "LOAD", second)
	compare("before a restart")

	p.Stop()
	p = cellOnDir(t, dir)
	cell = mustDial(t, p)
	compare("after SIGTERM")

	change("FUNCTION", "DELETE", "second")
	change("FUNCTION", "LOAD", strings.Replace(second, "description='second'", "description='again'", 1))
	p.kill()
	p = cellOnDir(t, dir)
	cell = mustDial(t, p)
	compare("after SIGKILL")

	// redis-server's payload, restored over a flushed cellserver.
	dump := mustDo(t, ref, "FUNCTION", "DUMP")
	dump = dump[strings.Index(dump, "\n")+1 : len(dump)-2]
	change("FUNCTION", "FLUSH")
	change("FUNCTION", "RESTORE", dump)
	p.kill()
	p = cellOnDir(t, dir)
	cell = mustDial(t, p)
	compare("after RESTORE of redis-server's DUMP and SIGKILL")
	mustDo(t, ref, "FUNCTION", "FLUSH")
}

// functionsInOrder is a FUNCTION LIST reply with each library's functions
// sorted: Redis lists them in the order of its hash table, which its
// random hash seed changes from one start to the next.
func functionsInOrder(t *testing.T, reply string) string {
	t.Helper()
	v, err := parseReply([]byte(reply))
	if err != nil {
		t.Fatalf("%q: %v", reply, err)
	}
	for _, lib := range v.elems {
		for i := 0; i+1 < len(lib.elems); i += 2 {
			if lib.elems[i].text == "functions" {
				fns := lib.elems[i+1].elems
				sort.Slice(fns, func(a, b int) bool { return string(fns[a].encode()) < string(fns[b].encode()) })
			}
		}
	}
	return string(v.encode())
}
