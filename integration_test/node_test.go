package integration_test

// Node.js clients: ioredis, node-redis, rate-limiter-flexible and
// express-rate-limit with rate-limit-redis, at the exact versions of
// node/package-lock.json (installed by `npm ci --prefix integration_test/node`).
// Each script in node/ runs once per server (`node script.js host port
// features`) and prints a JSON transcript; the two must be equal. The
// CL.THROTTLE replies go in a separate list, checked against redis-cell's
// vectors for cellserver and as "unknown command" for redis-server.

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptTimeout bounds one session script; the Node scripts stop themselves
// after 20 s.
const scriptTimeout = 30 * time.Second

// missingPeer skips t with msg, or fails it when CELLSERVER_REQUIRE_PEERS=1,
// like requirePeer for things that are not a program on the PATH.
func missingPeer(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CELLSERVER_REQUIRE_PEERS") == "1" {
		t.Fatalf("%s (CELLSERVER_REQUIRE_PEERS=1)", msg)
	}
	noteSkip(t, msg)
	t.Skip(msg)
}

// requireNode returns the node binary once node and the packages of
// node/package-lock.json are installed.
func requireNode(t testing.TB) string {
	t.Helper()
	node := requirePeer(t, "node")
	for _, pkg := range []string{"ioredis", "redis", "rate-limiter-flexible", "express-rate-limit", "rate-limit-redis", "express"} {
		if _, err := os.Stat(filepath.Join("node", "node_modules", pkg, "package.json")); err != nil {
			missingPeer(t, "integration_test/node/node_modules lacks "+pkg+"; run: npm ci --prefix integration_test/node")
		}
	}
	return node
}

// scriptOutput is what a session script (node/*.js, python/*.py) prints.
type scriptOutput struct {
	Lines    []string `json:"lines"`
	Throttle []string `json:"throttle"`
}

// runScript runs a session script and parses its JSON transcript. The
// script is our child: a timer kills it by its pid if it hangs.
func runScript(cmd *exec.Cmd) (scriptOutput, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	timer := time.AfterFunc(scriptTimeout, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.Output()
	var res scriptOutput
	if err != nil {
		return res, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return res, fmt.Errorf("%s: %v\n%s%s", strings.Join(cmd.Args, " "), err, out, stderr.String())
	}
	return res, nil
}

// nodeCommand runs node/<script> host port features.
func nodeCommand(node, script string, features []string) func(addr string) *exec.Cmd {
	return func(addr string) *exec.Cmd {
		host, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(node, script, host, port, strings.Join(features, ","))
		cmd.Dir = "node"
		return cmd
	}
}

// cellFeatures names what cellserver has of the features the scripts
// switch on, so both servers run the same session.
func cellFeatures(t testing.TB) []string {
	var f []string
	if hasScripting(t) {
		f = append(f, "eval")
	}
	if hasSortedSets(t) {
		f = append(f, "zset")
	}
	return f
}

// compareScripts runs a session script against both servers at once and
// compares the transcripts; it returns both outputs for the CL.THROTTLE
// checks.
func compareScripts(t *testing.T, what string, command func(addr string) *exec.Cmd) (redis, cell scriptOutput) {
	t.Helper()
	s := sharedServers(t)
	newPair(t) // FLUSHALL both
	forgetScripts(t, s)
	var errs [2]error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); redis, errs[0] = runScript(command(s.redis.addr)) }()
	go func() { defer wg.Done(); cell, errs[1] = runScript(command(s.cell.addr)) }()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(redis.Lines) == 0 {
		t.Fatalf("%s recorded nothing against redis-server", what)
	}
	compareTranscripts(t, what, redis.Lines, cell.Lines)
	return redis, cell
}

// compareNode is compareScripts for node/<script>.
func compareNode(t *testing.T, script string, features []string) (redis, cell scriptOutput) {
	t.Helper()
	node := requireNode(t)
	return compareScripts(t, script+" "+strings.Join(features, ","), nodeCommand(node, script, features))
}

// checkThrottle compares cellserver's CL.THROTTLE lines with redis-cell's
// and requires redis-server (no module) to have refused each call.
func checkThrottle(t *testing.T, redis, cell scriptOutput, want []string) {
	t.Helper()
	for i, line := range redis.Throttle {
		if !strings.Contains(line, "unknown command") {
			t.Errorf("redis-server, CL.THROTTLE line %d: %s", i+1, line)
		}
	}
	if selfTest() {
		return
	}
	compareLines(t, "CL.THROTTLE", "redis-cell", want, cell.Throttle)
}

// TestNodeIoredis: ioredis (ready check by INFO, EVALSHA then EVAL on
// NOSCRIPT for defineCommand scripts): W1, W2, W3, W4, W5.
func TestNodeIoredis(t *testing.T) {
	redis, cell := compareNode(t, "ioredis_session.js", cellFeatures(t))
	checkThrottle(t, redis, cell, []string{
		`user123 first -> [0,16,15,-1,2]`,
		`user123 second -> [0,16,14,-1,4]`,
		`t3 pipeline -> [[null,[0,3,2,-1,1]],[null,[0,3,1,-1,1]],[null,[0,3,0,-1,1]],[null,[1,3,0,1,1]]]`,
		`bad argument -> {"error":"Cell error: Store error: Couldn't parse as integer: x"}`,
	})
}

// TestNodeRedis: node-redis in RESP3 (its default, HELLO 3) and RESP2:
// W1, W2, W3, W4.
func TestNodeRedis(t *testing.T) {
	for _, resp := range []string{"resp3", "resp2"} {
		t.Run(resp, func(t *testing.T) {
			redis, cell := compareNode(t, "node_redis_session.js", append(cellFeatures(t), resp))
			checkThrottle(t, redis, cell, []string{
				`user123 first -> [0,16,15,-1,2]`,
				`user123 second -> [0,16,14,-1,4]`,
				`z0 first -> [0,1,0,-1,1]`,
				`z0 second -> [1,1,0,1,1]`,
				`bad argument -> {"error":"Cell error: Store error: Couldn't parse as integer: x"}`,
			})
		})
	}
}

// TestNodeRateLimiters: rate-limiter-flexible (MULTI path without scripting,
// Lua path with it, on ioredis and node-redis) and express-rate-limit with
// rate-limit-redis (Lua, SCRIPT LOAD + EVALSHA) over real HTTP.
func TestNodeRateLimiters(t *testing.T) {
	compareNode(t, "rate_limiters.js", cellFeatures(t))
}

// TestNodeConnectionSetup: ioredis and node-redis against servers with a
// password, a database and a connection name.
func TestNodeConnectionSetup(t *testing.T) {
	node := requireNode(t)
	s := startServers(t, serverOptions{requirepass: "s3cret"})
	command := nodeCommand(node, "connection_setup.js", nil)
	var outs [2]scriptOutput
	for i, p := range []*process{s.redis, s.cell} {
		out, err := runScript(command(p.addr))
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = out
	}
	if len(outs[0].Lines) == 0 {
		t.Fatal("connection_setup.js recorded nothing against redis-server")
	}
	compareTranscripts(t, "connection_setup.js", outs[0].Lines, outs[1].Lines)
}
