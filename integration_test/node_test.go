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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// nodeTimeout bounds one script run; the scripts stop themselves after 20 s.
const nodeTimeout = 30 * time.Second

// missingPeer skips t with msg, or fails it when CELLSERVER_REQUIRE_PEERS=1,
// like requirePeer for things that are not a program on the PATH.
func missingPeer(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CELLSERVER_REQUIRE_PEERS") == "1" {
		t.Fatalf("%s (CELLSERVER_REQUIRE_PEERS=1)", msg)
	}
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

// nodeOutput is what a script in node/ prints.
type nodeOutput struct {
	Lines    []string `json:"lines"`
	Throttle []string `json:"throttle"`
}

// runNode runs node/<script> against addr with the features listed.
func runNode(t testing.TB, node, script, addr string, features []string) (nodeOutput, error) {
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(node, script, host, port, strings.Join(features, ","))
	cmd.Dir = "node"
	var stderr strings.Builder
	cmd.Stderr = &stderr
	timer := time.AfterFunc(nodeTimeout, func() { cmd.Process.Kill() }) // our child, by its pid
	defer timer.Stop()
	out, err := cmd.Output()
	var res nodeOutput
	if err != nil {
		return res, &nodeError{script, addr, err, stderr.String()}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return res, &nodeError{script, addr, err, string(out) + stderr.String()}
	}
	return res, nil
}

type nodeError struct {
	script, addr string
	err          error
	output       string
}

func (e *nodeError) Error() string {
	return "node " + e.script + " against " + e.addr + ": " + e.err.Error() + "\n" + e.output
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

// compareNode runs script against both servers at once and compares the
// transcripts; it returns both outputs for the CL.THROTTLE checks.
func compareNode(t *testing.T, script string, features []string) (redis, cell nodeOutput) {
	t.Helper()
	node := requireNode(t)
	s := sharedServers(t)
	newPair(t) // FLUSHALL both
	var errs [2]error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); redis, errs[0] = runNode(t, node, script, s.redis.addr, features) }()
	go func() { defer wg.Done(); cell, errs[1] = runNode(t, node, script, s.cell.addr, features) }()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(redis.Lines) == 0 {
		t.Fatalf("%s recorded nothing against redis-server", script)
	}
	compareTranscripts(t, script+" "+strings.Join(features, ","), redis.Lines, cell.Lines)
	return redis, cell
}

// checkThrottle compares cellserver's CL.THROTTLE lines with redis-cell's
// and requires redis-server (no module) to have refused each call.
func checkThrottle(t *testing.T, redis, cell nodeOutput, want []string) {
	t.Helper()
	for i, line := range redis.Throttle {
		if !strings.Contains(line, "unknown command") {
			t.Errorf("redis-server, CL.THROTTLE line %d: %s", i+1, line)
		}
	}
	if selfTest() {
		return
	}
	compareTranscripts(t, "CL.THROTTLE (want: redis-cell's vectors)", want, cell.Throttle)
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
