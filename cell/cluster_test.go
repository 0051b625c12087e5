package cell

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
	"github.com/cellserver/cellserver/resp"
	"github.com/cellserver/cellserver/zsetlite"
)

const testTopology = `# a comment, then Redis's own lines
aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460 [5->-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2]

aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2 10.0.0.2:7002,node2.example master - 0 1700000000000 2 connected 5461-10922 [7-<-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1]
AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA3 10.0.0.3:7003@17003 master - 0 0 3 connected 10923-16382 16383
vars currentEpoch 3 lastVoteEpoch 0
`

func TestParseTopology(t *testing.T) {
	top, err := ParseTopology(testTopology, SelfHint{})
	if err != nil {
		t.Fatal(err)
	}
	if top.Self != 0 || !top.ok() || len(top.Nodes) != 3 {
		t.Fatalf("self %d ok %v nodes %d", top.Self, top.ok(), len(top.Nodes))
	}
	n2 := top.Nodes[1]
	if n2.Host != "10.0.0.2" || n2.Port != 7002 || n2.BusPort != 17002 || n2.Hostname != "node2.example" || n2.Epoch != 2 {
		t.Errorf("node 2: %+v", n2)
	}
	if top.Nodes[2].ID != "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3" {
		t.Errorf("ids are kept lower-case: %s", top.Nodes[2].ID)
	}
	for slot, want := range map[int]int{0: 0, 5460: 0, 5461: 1, 16383: 2} {
		if got := top.Owner(slot); got != &top.Nodes[want] {
			t.Errorf("owner of %d: %v", slot, got)
		}
	}
	if top.migrating[5] != 1 || len(top.importing) != 0 {
		t.Errorf("open slots of node 1: migrating %v importing %v", top.migrating, top.importing)
	}
	// The same file, seen by node 2: its own open slots, not node 1's.
	top2, err := ParseTopology(testTopology, SelfHint{NodeID: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2"})
	if err != nil || top2.Self != 1 || top2.importing[7] != 0 || len(top2.migrating) != 0 {
		t.Errorf("node 2's view: %v %+v", err, top2)
	}
	// Without a myself flag or id: the line with our port.
	plain := strings.ReplaceAll(testTopology, "myself,", "")
	top3, err := ParseTopology(plain, SelfHint{Port: 7003})
	if err != nil || top3.Self != 2 {
		t.Errorf("by port: %v", err)
	}
	text := top.nodesText()
	if !strings.Contains(text, "127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460 [5->-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2]\n") ||
		!strings.Contains(text, "10.0.0.3:7003@17003 master - 0 ") || !strings.Contains(text, " 3 connected 10923-16383\n") {
		t.Errorf("CLUSTER NODES:\n%s", text)
	}
	// CLUSTER NODES output reads back as the same topology.
	back, err := ParseTopology(text, SelfHint{})
	if err != nil || back.Self != 0 || back.owner != top.owner || back.migrating[5] != 1 {
		t.Errorf("CLUSTER NODES does not read back: %v", err)
	}
}

func TestParseTopologyErrors(t *testing.T) {
	id := func(c byte) string { return strings.Repeat(string(c), 40) }
	line := func(i byte, addr, slots string) string {
		return id(i) + " " + addr + " master - 0 0 1 connected " + slots + "\n"
	}
	for _, tc := range []struct{ text, want string }{
		{"", "no nodes"},
		{"# only a comment\n", "no nodes"},
		{"abc 127.0.0.1:1@2 master - 0 0 1 connected\n", "not 40 hex"},
		{id('1') + " 127.0.0.1:1@2 master - 0 0\n", "at least 8 fields"},
		{line('1', "127.0.0.1", "0"), "not ip:port"},
		{line('1', "127.0.0.1:0@1", "0"), "bad port"},
		{line('1', "127.0.0.1:1@x", "0"), "bad bus port"},
		{line('1', "127.0.0.1:1", "16384"), "bad slot"},
		{line('1', "127.0.0.1:1", "5-4"), "bad slot"},
		{line('1', "127.0.0.1:1", "-1"), "bad slot"},
		{line('1', "127.0.0.1:1", "[5]"), "bad open slot"},
		{line('1', "127.0.0.1:1", "0-10") + line('2', "127.0.0.1:2", "10"), "slot 10 already served"},
		{line('1', "127.0.0.1:1", "0") + line('1', "127.0.0.1:2", "1"), "appears twice"},
		{id('1') + " 127.0.0.1:1 slave " + id('2') + " 0 0 1 connected\n", "replicas are not supported"},
		{id('1') + " 127.0.0.1:1 master " + id('2') + " 0 0 1 connected\n", "replicas are not supported"},
		{id('1') + " 127.0.0.1:1 master,weird - 0 0 1 connected\n", `unknown flag "weird"`},
		{id('1') + " 127.0.0.1:1 master - 0 0 x connected\n", "config epoch"},
		{id('1') + " 127.0.0.1:1 myself - 0 0 1 connected\n" + id('2') + " 127.0.0.1:2 myself - 0 0 1 connected\n", "second line flagged myself"},
		{line('1', "127.0.0.1:1", "0") + line('2', "127.0.0.1:2", "1"), "no line is this node's"},
		{id('1') + " 127.0.0.1:1 myself - 0 0 1 connected [3->-" + id('9') + "]\n", "unknown node"},
	} {
		_, err := ParseTopology(tc.text, SelfHint{Port: 9})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.text, err, tc.want)
		}
	}
	if _, err := ParseTopology(line('1', "127.0.0.1:1", "0"), SelfHint{NodeID: id('2')}); err == nil || !strings.Contains(err.Error(), "not in the file") {
		t.Errorf("unknown --cluster-node-id: %v", err)
	}
}

// clusterServer is an in-process node 1 of testTopology (slots 0-5460).
func clusterServer(t testing.TB) *Server {
	t.Helper()
	top, err := ParseTopology(strings.ReplaceAll(testTopology, " [5->-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2]", ""), SelfHint{})
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, func(c *Config) { c.Cluster = top })
}

func TestClusterRouting(t *testing.T) {
	srv := clusterServer(t)
	c := dial(t, srv)
	other := dial(t, srv)
	for _, tc := range [][]string{
		{"SET b 1", "+OK"},
		{"GET foo", "-MOVED 12182 10.0.0.3:7003"},
		{"GET key1", "-MOVED 9189 10.0.0.2:7002"},
		{"MGET b {b}x", "*2"},
		{"MGET b foo", "-CROSSSLOT Keys in request don't hash to the same slot"},
		{"ASKING", "+OK"},
		{"GET foo", "-MOVED 12182 10.0.0.3:7003"},
		// Slot 3300 ("b") migrating to node 2: present keys are served,
		// missing ones are sent to the target with -ASK.
		{"CLUSTER SETSLOT 3300 MIGRATING aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2", "+OK"},
		{"GET b", "$1"},
		{"GET {b}missing", "-ASK 3300 10.0.0.2:7002"},
		{"MGET b {b}missing", "-TRYAGAIN Multiple keys request during rehashing of slot"},
		{"MIGRATE 127.0.0.1 1 {b}missing 0 10", "+NOKEY"},
		{"CLUSTER SETSLOT 3300 NODE aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2", "-ERR Can't assign hashslot 3300 to a different node while I still hold keys for this hash slot."},
		{"DEL b", ":1"},
		{"CLUSTER SETSLOT 3300 NODE aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2", "+OK"},
		{"GET b", "-MOVED 3300 10.0.0.2:7002"},
		// Importing slot 12182 from node 3: only after ASKING, for one command.
		{"CLUSTER SETSLOT 12182 IMPORTING aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3", "+OK"},
		{"SET foo 1", "-MOVED 12182 10.0.0.3:7003"},
		{"ASKING", "+OK"},
		{"SET foo 1", "+OK"},
		{"GET foo", "-MOVED 12182 10.0.0.3:7003"},
		{"ASKING", "+OK"},
		{"MULTI", "+OK"},
		{"INCR foo", "+QUEUED"},
		{"EXEC", "*1"},
		{"RESTORE-ASKING foo 0 x REPLACE", "-ERR DUMP payload version or checksum are wrong"},
		{"CLUSTER SETSLOT 12182 STABLE", "+OK"},
		{"CLUSTER SETSLOT 0 IMPORTING aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2", "-ERR I'm already the owner of hash slot 0"},
		{"CLUSTER SETSLOT 12182 MIGRATING aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2", "-ERR I'm not the owner of hash slot 12182"},
		{"CLUSTER SETSLOT 0 NODE nosuch", "-ERR Unknown node nosuch"},
		{"SELECT 0", "+OK"},
		{"SELECT 2", "-ERR SELECT is not allowed in cluster mode"},
	} {
		if got := c.do(strings.Fields(tc[0])...); !strings.HasPrefix(got, tc[1]+"\r\n") {
			t.Errorf("%s: %q, want %q", tc[0], got, tc[1])
		}
	}
	// EXEC with a queue across slots is refused as a whole, without EXECABORT.
	for _, cmd := range []string{"MULTI", "SET aa 1", "SET cc 1", "EXEC", "GET aa"} {
		other.do(strings.Fields(cmd)...)
	}
	if got := other.do("EXISTS", "aa"); got != ":0\r\n" {
		t.Errorf("a CROSSSLOT EXEC ran: EXISTS aa %q", got)
	}
	// Giving a slot away and taking it back on the other side of a cluster
	// that is down meanwhile.
	if got := c.do("CLUSTER", "SETSLOT", "16383", "NODE", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := c.do("CLUSTER", "INFO"); !strings.Contains(got, "cluster_state:ok\r\n") {
		t.Errorf("CLUSTER INFO: %q", got)
	}
}

// TestClusterDisabled: without cluster mode every cluster command says so,
// and keys go to any shard as before.
func TestClusterDisabled(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	for _, cmd := range []string{"CLUSTER INFO", "CLUSTER KEYSLOT a", "CLUSTER HELP", "READONLY", "READWRITE", "ASKING", "CLUSTER SETSLOT 1 STABLE"} {
		if got := c.do(strings.Fields(cmd)...); got != "-"+ErrClusterDisabled+"\r\n" {
			t.Errorf("%s: %q", cmd, got)
		}
	}
	if got := c.do("CLUSTER", "NOSUCH"); got != "-ERR unknown subcommand 'NOSUCH'. Try CLUSTER HELP.\r\n" {
		t.Errorf("CLUSTER NOSUCH: %q", got)
	}
	if got := c.do("INFO", "cluster"); !strings.Contains(got, "cluster_enabled:0") {
		t.Errorf("INFO cluster: %q", got)
	}
	if srv.ks.BySlot() || srv.clusterOn {
		t.Error("cluster mode on without a topology")
	}
}

func TestDumpRestore(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("SET", "s", "v\x00\r\n")
	c.do("RPUSH", "l", "a", "", "c")
	c.do("HSET", "h", "f", "v", "g", "")
	c.do("ZADD", "z", "1", "a", "-inf", "b", "2.5", "")
	c.do("CL.THROTTLE", "rl", "5", "1", "60")
	c.do("PEXPIRE", "rl", "100000")
	for _, k := range []string{"s", "l", "h", "z", "rl"} {
		p := c.do("DUMP", k)
		payload := bulkBody(t, p)
		if got := c.do("RESTORE", k+"2", "0", payload); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s: %q", k, got)
		}
		if a, b := c.do("DUMP", k), c.do("DUMP", k+"2"); a != b {
			t.Errorf("%s restored differs: %q vs %q", k, a, b)
		}
		if got := c.do("RESTORE", k+"2", "0", payload); got != "-"+ErrBusyKey+"\r\n" {
			t.Errorf("RESTORE over a key: %q", got)
		}
		if got := c.do("RESTORE", k+"2", "5000", payload, "REPLACE"); got != "+OK\r\n" {
			t.Errorf("RESTORE REPLACE: %q", got)
		}
		if got := c.do("PTTL", k+"2"); got < ":4000\r\n" || got > ":5000\r\n" {
			t.Errorf("PTTL after RESTORE 5000: %q", got)
		}
		// An absolute time in the past: nothing is created, the old key is gone.
		if got := c.do("RESTORE", k+"2", "1", payload, "REPLACE", "ABSTTL"); got != "+OK\r\n" {
			t.Errorf("RESTORE ABSTTL past: %q", got)
		}
		if got := c.do("EXISTS", k+"2"); got != ":0\r\n" {
			t.Errorf("RESTORE with a past ABSTTL left the key: %q", got)
		}
		// Every one-byte corruption and every truncation is refused cleanly.
		for i := 0; i < len(payload); i++ {
			b := []byte(payload)
			b[i] ^= 0x41
			if got := c.do("RESTORE", "bad", "0", string(b)); got != "-"+ErrDumpPayload+"\r\n" {
				t.Errorf("%s payload with byte %d changed: %q", k, i, got)
			}
			if got := c.do("RESTORE", "bad", "0", payload[:i]); got != "-"+ErrDumpPayload+"\r\n" {
				t.Errorf("%s payload cut at %d: %q", k, i, got)
			}
		}
	}
	if got := c.do("CL.THROTTLE", "rl2", "5", "1", "60"); got == "" {
		t.Error("no reply")
	}
	// A large set restores large from its first member, as Redis loads
	// one, so a -0 score among the first keeps its sign.
	for i := range 200 {
		c.do("ZADD", "bz", strconv.Itoa(i), "m"+strconv.Itoa(i))
	}
	c.do("ZADD", "bz", "-0", "0")
	if got := c.do("RESTORE", "bz2", "0", bulkBody(t, c.do("DUMP", "bz"))); got != "+OK\r\n" {
		t.Fatalf("RESTORE bz: %q", got)
	}
	if got := c.do("ZSCORE", "bz2", "0"); got != "$2\r\n-0\r\n" {
		t.Errorf("ZSCORE of the -0 member after RESTORE: %q", got)
	}
	// A payload with a valid trailer but a bad body.
	// In RDB encoding: type byte (0 string, 1 list, 2 set, 4 hash), body;
	// a set with a member twice is refused as Redis refuses it.
	for _, body := range [][]byte{{99}, {0, 5, 'a'}, {1, 0}, {4, 1, 1, 'f'}, {4, 2, 1, 'f', 1, 'v', 1, 'f', 1, 'w'},
		{2, 2, 1, 'm', 1, 'm'}, {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if got := c.do("RESTORE", "bad", "0", string(sealDump(body))); got != "-"+ErrBadDataFormat+"\r\n" {
			t.Errorf("body %v: %q", body, got)
		}
	}
}

// sealDump appends Redis's trailer (RDB version 10, CRC-64) to a body.
func sealDump(body []byte) []byte {
	out := append([]byte(nil), body...)
	out = binary.LittleEndian.AppendUint16(out, rdb.Version)
	return binary.LittleEndian.AppendUint64(out, rdb.CRC64(0, out))
}

func bulkBody(t *testing.T, reply string) string {
	t.Helper()
	head, rest, ok := strings.Cut(reply, "\r\n")
	if !ok || head[0] != '$' {
		t.Fatalf("not a bulk reply: %q", reply)
	}
	n, _ := resp.ParseInt([]byte(head[1:]))
	return rest[:n]
}

// FuzzRestoreBody: any body under a valid trailer decodes or is refused,
// never panics.
func FuzzRestoreBody(f *testing.F) {
	f.Add([]byte{0, 1, 'a'})
	f.Add([]byte{1, 2, 1, 'a', 0})
	f.Add([]byte{4, 1, 1, 'f', 1, 'v'})
	f.Add([]byte{5, 1, 1, 'm', 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
	f.Fuzz(func(t *testing.T, body []byte) {
		if v, err := rdb.DecodeDump(sealDump(body)); err == nil {
			valueObject(&v, zsetlite.Config{MaxListpackEntries: 2, MaxListpackValue: 4}, keyspace.SetMaxIntsetEntries)
		}
		rdb.DecodeDump(body)
	})
}

// FuzzClusterCommands is FuzzCommands on a cluster-mode node.
func FuzzClusterCommands(f *testing.F) {
	for _, s := range []string{
		"SET b 1\nGET foo\nMGET b foo\nMGET b {b}x\nCLUSTER KEYSLOT {}\nCLUSTER COUNTKEYSINSLOT 3300\nCLUSTER GETKEYSINSLOT 3300 9223372036854775807",
		"CLUSTER SETSLOT 3300 MIGRATING aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2\nGET {b}x\nMULTI\nGET b\nEXEC\nCLUSTER SETSLOT 3300 STABLE",
		"CLUSTER SETSLOT 12182 IMPORTING aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3\nASKING\nSET foo 1\nCLUSTER SETSLOT 12182 NODE aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1\nCLUSTER NODES\nCLUSTER SLOTS\nCLUSTER SHARDS\nCLUSTER INFO",
		"DUMP b\nRESTORE b 0 x\nRESTORE b 0 x REPLACE ABSTTL IDLETIME 1\nRESTORE c -1 x\nSELECT 1\nWATCH foo\nREADONLY",
	} {
		f.Add(s)
	}
	top, err := ParseTopology(testTopology, SelfHint{})
	if err != nil {
		f.Fatal(err)
	}
	cfg := fuzzConfig()
	cfg.Cluster = top
	srv := New(cfg)
	f.Fuzz(func(t *testing.T, script string) {
		c, peer := pipeClient(srv)
		defer peer.Close()
		defer c.close()
		for _, line := range strings.Split(script, "\n") {
			args, ok := resp.SplitArgs([]byte(line), nil)
			if !ok || len(args) == 0 {
				continue
			}
			if cmd := lookupCommand(commands, args[0]); cmd != nil && (cmd.Name == "quit" || cmd.Name == "client" || cmd.Name == "monitor" || cmd.Name == "migrate") {
				continue // these act on connections or the network, not data
			}
			c.dispatch(args)
			checkRESP(t, c.w.Bytes(), line)
			c.w.Reset()
		}
	})
}

// TestScriptClusterCheck: a script's redis.call is routed like a client's
// command; anything not served here is Redis's non-local key error.
func TestScriptClusterCheck(t *testing.T) {
	srv := clusterServer(t)
	x := &Ctx{srv: srv, cl: &Client{srv: srv}}
	x.Begin(srv.ks, nil, 0, 1)
	for _, tc := range []struct{ cmd, want string }{
		{"GET b", ""},
		{"PING", ""},
		{"GET foo", ErrScriptNonLocalKey},
		{"MGET b {b}x", ""},
		{"MGET b aa", ErrScriptNonLocalKey}, // two local slots: CROSSSLOT for a client
	} {
		args := bytesArgs(strings.Fields(tc.cmd))
		if got := x.scriptClusterCheck(lookupCommand(commands, args[0]), args, nil); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.cmd, got, tc.want)
		}
	}
	standalone := startServer(t, nil)
	y := &Ctx{srv: standalone, cl: &Client{srv: standalone}}
	if got := y.scriptClusterCheck(commands["get"], bytesArgs([]string{"GET", "foo"}), nil); got != "" {
		t.Errorf("standalone: %q", got)
	}
}

func bytesArgs(s []string) [][]byte {
	out := make([][]byte, len(s))
	for i, a := range s {
		out[i] = []byte(a)
	}
	return out
}

// TestClusterScan: with keys placed by slot, SCAN still returns every key
// exactly once and COUNTKEYSINSLOT / GETKEYSINSLOT see each slot's keys.
func TestClusterScan(t *testing.T) {
	srv := clusterServer(t)
	c := dial(t, srv)
	want := map[string]bool{}
	perSlot := map[int]int{}
	for i := 0; len(want) < 500; i++ {
		k := "k" + itoa(int64(i))
		if s := KeySlot([]byte(k)); s <= 5460 {
			c.do("SET", k, "v")
			want[k] = true
			perSlot[s]++
		}
	}
	seen := map[string]int{}
	cursor := "0"
	for {
		reply := c.do("SCAN", cursor, "COUNT", "7")
		parts := strings.Split(reply, "\r\n")
		cursor = parts[2]
		for i := 4; i+1 < len(parts); i += 2 {
			seen[parts[i+1]]++
		}
		if cursor == "0" {
			break
		}
	}
	if len(seen) != len(want) {
		t.Errorf("SCAN saw %d keys, want %d", len(seen), len(want))
	}
	for k, n := range seen {
		if n != 1 || !want[k] {
			t.Errorf("SCAN returned %q %d times", k, n)
		}
	}
	for s, n := range perSlot {
		if got := c.do("CLUSTER", "COUNTKEYSINSLOT", itoa(int64(s))); got != ":"+itoa(int64(n))+"\r\n" {
			t.Errorf("COUNTKEYSINSLOT %d: %q, want %d", s, got, n)
		}
		if got := c.do("CLUSTER", "GETKEYSINSLOT", itoa(int64(s)), "1000"); !strings.HasPrefix(got, "*"+itoa(int64(n))+"\r\n") {
			t.Errorf("GETKEYSINSLOT %d: %q, want %d keys", s, got, n)
		}
	}
}

// TestClusterHostname: a node written host:port,hostname gets Redis 7.0's
// hostname metadata in CLUSTER SLOTS and SHARDS.
func TestClusterHostname(t *testing.T) {
	srv := clusterServer(t)
	c := dial(t, srv)
	slots := c.do("CLUSTER", "SLOTS")
	if !strings.Contains(slots, "$8\r\n10.0.0.2\r\n:7002\r\n$40\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2\r\n*2\r\n$8\r\nhostname\r\n$13\r\nnode2.example\r\n") {
		t.Errorf("CLUSTER SLOTS: %q", slots)
	}
	if !strings.Contains(slots, "$9\r\n127.0.0.1\r\n:7001\r\n$40\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1\r\n*0\r\n") {
		t.Errorf("CLUSTER SLOTS without a hostname: %q", slots)
	}
	shards := c.do("CLUSTER", "SHARDS")
	if !strings.Contains(shards, "$8\r\nendpoint\r\n$8\r\n10.0.0.2\r\n$8\r\nhostname\r\n$13\r\nnode2.example\r\n$4\r\nrole\r\n") {
		t.Errorf("CLUSTER SHARDS: %q", shards)
	}
	if got := c.do("CLUSTER", "NODES"); !strings.Contains(got, "10.0.0.2:7002@17002,node2.example master") {
		t.Errorf("CLUSTER NODES: %q", got)
	}
}

// TestClusterScripts: EVAL's declared keys are routed like any command's;
// a key of another node's slot reached inside the script is Redis's
// non-local key error.
func TestClusterScripts(t *testing.T) {
	srv := clusterServer(t)
	c := dial(t, srv)
	for _, tc := range [][]string{
		{"EVAL|return redis.call('set', KEYS[1], 'v')|1|b", "+OK"},
		{"EVAL|return 1|1|foo", "-MOVED 12182 10.0.0.3:7003"},
		{"EVAL|return 1|2|b|aa", "-CROSSSLOT Keys in request don't hash to the same slot"},
		{"EVAL|return redis.call('get', 'foo')|0", "-ERR Script attempted to access a non local key in a cluster node"},
		{"EVAL|return redis.call('get', 'foo')|1|b", "-ERR Script attempted to access a non local key in a cluster node"},
		{"EVAL|return redis.call('get', KEYS[1])|1|b", "$1"},
	} {
		args := strings.Split(tc[0], "|")
		if got := c.do(args...); !strings.HasPrefix(got, tc[1]) {
			t.Errorf("%s: %q, want %q", tc[0], got, tc[1])
		}
	}
}
