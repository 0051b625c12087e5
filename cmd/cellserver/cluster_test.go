package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testTopology = `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1 127.0.0.1:7001@17001 master - 0 0 1 connected 0-8191
aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2 127.0.0.1:7002@17002 master - 0 0 2 connected 8192-16383
`

func TestClusterFlags(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "topology.conf")
	if err := os.WriteFile(topo, []byte(testTopology), 0o644); err != nil {
		t.Fatal(err)
	}
	// By port, by id, and from a configuration file.
	cfg, err := parseFlags([]string{"--port", "7002", "--cluster-enabled", "yes", "--cluster-config-file", topo}, io.Discard)
	if err != nil || cfg.Cluster == nil || cfg.Cluster.Myself().Port != 7002 {
		t.Fatalf("by port: %v %+v", err, cfg.Cluster)
	}
	cfg, err = parseFlags([]string{"--port", "9999", "--cluster-enabled", "yes", "--cluster-config-file", topo,
		"--cluster-node-id", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"}, io.Discard)
	if err != nil || cfg.Cluster.Myself().Port != 7001 {
		t.Fatalf("by id: %v", err)
	}
	conf := filepath.Join(dir, "node.conf")
	os.WriteFile(conf, []byte("port 7001\ncluster-enabled yes\ncluster-config-file "+topo+"\n"), 0o644)
	if cfg, err = parseFlags([]string{conf}, io.Discard); err != nil || cfg.Cluster == nil || cfg.Cluster.Myself().Port != 7001 {
		t.Fatalf("from a configuration file: %v", err)
	}
	if cfg, err = parseFlags(nil, io.Discard); err != nil || cfg.Cluster != nil || cfg.ClusterBus {
		t.Fatalf("default: %v %v", err, cfg.Cluster)
	}
	// The cluster bus: no topology file, a file that does not exist yet
	// (nodes.conf, written by the bus), or one the bus wrote.
	nodesConf := filepath.Join(dir, "nodes.conf")
	os.WriteFile(nodesConf, []byte(testTopology+"vars currentEpoch 2 lastVoteEpoch 0\n"), 0o644)
	for _, args := range [][]string{
		{"--cluster-enabled", "yes"},
		{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "missing")},
		{"--cluster-enabled", "yes", "--cluster-config-file", nodesConf},
	} {
		if cfg, err = parseFlags(args, io.Discard); err != nil || cfg.Cluster != nil || !cfg.ClusterBus {
			t.Errorf("%q: %v, bus %v, want bus mode", args, err, cfg.ClusterBus)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-enabled", "maybe"}, "yes"},
		{[]string{"--cluster-enabled", "yes", "--cluster-node-id", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"}, "needs --cluster-config-file"},
		{[]string{"--cluster-enabled", "yes", "--cluster-node-id", "x", "--cluster-config-file", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"--port", "1", "--cluster-enabled", "yes", "--cluster-config-file", topo}, "no line is this node's"},
		{[]string{"--cluster-enabled", "yes", "--cluster-config-file", topo, "--cluster-node-id", "nope"}, "not in the file"},
	} {
		_, err := parseFlags(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestParseSlotList(t *testing.T) {
	got, err := parseSlotList("5,10-12, 16383")
	if err != nil || len(got) != 5 || got[0] != 5 || got[3] != 12 || got[4] != 16383 {
		t.Errorf("parseSlotList: %v %v", got, err)
	}
	for _, bad := range []string{"", "x", "5-4", "16384", "-1", "1-", "1,,2"} {
		if _, err := parseSlotList(bad); err == nil {
			t.Errorf("parseSlotList(%q) accepted", bad)
		}
	}
}

func TestMigrateUsage(t *testing.T) {
	var out strings.Builder
	if code := runMigrate([]string{"--from", "a:1"}, io.Discard, &out); code != 2 || !strings.Contains(out.String(), "--slots") {
		t.Errorf("missing flags: exit %d, %q", code, out.String())
	}
	if code := runMigrate([]string{"--help"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("--help: exit %d", code)
	}
	if code := runMigrate([]string{"--from", "127.0.0.1:1", "--to", "127.0.0.1:2", "--slots", "1"}, io.Discard, io.Discard); code != 1 {
		t.Errorf("unreachable nodes: exit %d", code)
	}
}
