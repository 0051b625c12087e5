package integration_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Functions over replication: Redis sends FUNCTION LOAD, DELETE, FLUSH
// and RESTORE down the stream as they came, and the libraries in a full
// resync's RDB; FCALL's writes go as their effects. Each pair of programs
// gets the same changes on the master, and then the replica's libraries,
// and keys, must be the master's.

// replLib is library name with one function, name_f, that sets its key to
// version (and returns it), and one no-writes function, name_get, that
// reads its key.
func replLib(name string, version int) string {
	return fmt.Sprintf(`#!lua name=%s
redis.register_function('%s_f', function(keys, args) redis.call('SET', keys[1], '%d') return %d end)
redis.register_function{function_name='%s_get', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}`,
		name, name, version, version, name)
}

// libraryView is what a server says of libraries a..e, one line each
// (FUNCTION LIST of that one library, with its code), plus FUNCTION
// STATS's counts: the same on Redis and cellserver whatever their orders.
func libraryView(t *testing.T, n *replNode) string {
	t.Helper()
	ctx := context.Background()
	var out string
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		v, err := n.rdb.Do(ctx, "FUNCTION", "LIST", "LIBRARYNAME", name, "WITHCODE").Result()
		if err != nil {
			t.Fatalf("FUNCTION LIST: %v", err)
		}
		out += fmt.Sprintf("%s: %v\n", name, sortedFunctions(v))
	}
	v, err := n.rdb.Do(ctx, "FUNCTION", "STATS").Result()
	if err != nil {
		t.Fatalf("FUNCTION STATS: %v", err)
	}
	return out + fmt.Sprint(v)
}

// sortedFunctions orders the functions of each library of a FUNCTION
// LIST reply (RESP2) by what they print as: Redis lists them in its hash
// table's order.
func sortedFunctions(v any) any {
	libs, _ := v.([]any)
	for _, l := range libs {
		fields, _ := l.([]any)
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "functions" {
				fns, _ := fields[i+1].([]any)
				slices.SortFunc(fns, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			}
		}
	}
	return v
}

// syncedLibraries waits for the replica to have what the master sent,
// then compares their libraries and keys.
func syncedLibraries(t *testing.T, master, replica *replNode, when string) {
	t.Helper()
	ctx := context.Background()
	if n, err := master.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("%s: WAIT 1 5000 = %d, %v", when, n, err)
	}
	if m, r := libraryView(t, master), libraryView(t, replica); m != r {
		t.Fatalf("%s: libraries differ\nmaster  %s\nreplica %s", when, m, r)
	}
	compareKeyspaces(t, master, replica)
}

func runFunctionReplication(t *testing.T, masterProg, replicaProg string) {
	ctx := context.Background()
	master := startReplNode(t, masterProg)
	do := func(args ...any) any {
		t.Helper()
		v, err := master.rdb.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	// Before the replica: the full resync's RDB carries it.
	do("FUNCTION", "LOAD", replLib("a", 1))
	do("FCALL", "a_f", "1", "ka")
	replica := startReplNode(t, replicaProg)
	if err := replica.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", master.port).Err(); err != nil {
		t.Fatalf("REPLICAOF: %v", err)
	}
	waitLinkUp(t, replica)
	syncedLibraries(t, master, replica, "full resync")
	if v, err := replica.rdb.Do(ctx, "FCALL_RO", "a_get", "1", "ka").Result(); err != nil || v != "1" {
		t.Errorf("FCALL_RO on the replica: %v, %v", v, err)
	}
	if err := replica.rdb.Do(ctx, "FCALL", "a_f", "1", "ka").Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
		t.Errorf("FCALL of a writing function on the replica: %v", err)
	}

	// The stream: each change as it came, FCALL's writes as effects.
	do("FUNCTION", "LOAD", replLib("b", 1))
	do("FUNCTION", "LOAD", "REPLACE", replLib("a", 2))
	do("FCALL", "a_f", "1", "ka")
	do("FCALL", "b_f", "1", "kb")
	syncedLibraries(t, master, replica, "load")
	dump := do("FUNCTION", "DUMP")
	do("FUNCTION", "DELETE", "b")
	do("FUNCTION", "LOAD", replLib("c", 1))
	syncedLibraries(t, master, replica, "delete")
	do("FUNCTION", "FLUSH")
	syncedLibraries(t, master, replica, "flush")
	do("FUNCTION", "LOAD", replLib("c", 2))
	do("FUNCTION", "RESTORE", dump, "APPEND") // a, b
	syncedLibraries(t, master, replica, "restore append")
	do("FUNCTION", "LOAD", "REPLACE", replLib("a", 3))
	do("FUNCTION", "RESTORE", dump, "REPLACE") // a back to 2
	syncedLibraries(t, master, replica, "restore replace")
	do("FUNCTION", "RESTORE", dump, "FLUSH")
	do("FCALL", "a_f", "1", "ka2")
	syncedLibraries(t, master, replica, "restore flush")
	// Refused changes change nothing anywhere.
	if err := master.rdb.Do(ctx, "FUNCTION", "LOAD", replLib("a", 9)).Err(); err == nil {
		t.Fatal("FUNCTION LOAD of a loaded library: no error")
	}
	master.rdb.Do(ctx, "FUNCTION", "DELETE", "nosuch")

	// A dropped link: the changes meanwhile come by the partial resync.
	if err := replica.rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Err(); err != nil {
		t.Fatalf("CLIENT KILL TYPE master: %v", err)
	}
	do("FUNCTION", "LOAD", replLib("d", 1))
	do("FUNCTION", "DELETE", "b")
	do("FCALL", "d_f", "1", "kd")
	waitLinkUp(t, replica)
	syncedLibraries(t, master, replica, "partial resync")
	if v, err := replica.rdb.Do(ctx, "FCALL_RO", "d_get", "1", "kd").Result(); err != nil || v != "1" {
		t.Errorf("FCALL_RO on the replica after the partial resync: %v, %v", v, err)
	}
}

// TestReplFunctionsRedisFromCellserver: redis-server 7.0.15 replicates a
// cellserver master's libraries.
func TestReplFunctionsRedisFromCellserver(t *testing.T) {
	runFunctionReplication(t, "cellserver", "redis-server")
}

// TestReplFunctionsCellserverFromCellserver: cellserver replicates
// cellserver's libraries.
func TestReplFunctionsCellserverFromCellserver(t *testing.T) {
	runFunctionReplication(t, "cellserver", "cellserver")
}

// TestReplFunctionsCellserverFromRedis: cellserver replicates
// redis-server 7.0.15's libraries.
func TestReplFunctionsCellserverFromRedis(t *testing.T) {
	runFunctionReplication(t, "redis-server", "cellserver")
}
