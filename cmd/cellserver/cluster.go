package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cellserver/cellserver/cell"
)

// clusterFlags checks the cluster flags and picks the cluster mode:
//
//   - the cluster bus (Redis Cluster's own protocol, the default): the
//     nodes find each other with CLUSTER MEET (redis-cli --cluster create)
//     and keep their table in --cluster-config-file (nodes.conf in --dir);
//   - a fixed topology file, shared by all nodes (the simple mode): chosen
//     by --cluster-node-id, or by a --cluster-config-file that exists and is
//     not a node table the bus wrote (it has no "vars" line).
//
// A bad topology file stops the server at start, with the line at fault.
func clusterFlags(cfg *cell.Config, enabled, nodeID string) error {
	switch enabled {
	case "no":
		return nil
	case "yes":
	default:
		return fmt.Errorf("--cluster-enabled %q: must be yes or no", enabled)
	}
	if nodeID == "" && !isTopologyFile(cfg.ClusterConfigFile) {
		cfg.ClusterBus = true
		return nil
	}
	if cfg.ClusterConfigFile == "" {
		return fmt.Errorf("--cluster-node-id needs --cluster-config-file (the topology every node shares)")
	}
	t, err := cell.LoadTopology(cfg.ClusterConfigFile, selfHint(cfg, nodeID))
	if err != nil {
		return fmt.Errorf("--cluster-config-file: %v", err)
	}
	cfg.Cluster = t
	return nil
}

// isTopologyFile reports whether path names an existing file without the
// "vars" line every nodes.conf of the bus (or of Redis) ends with.
func isTopologyFile(path string) bool {
	if path == "" {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "vars ") {
			return false
		}
	}
	return true
}

func selfHint(cfg *cell.Config, nodeID string) cell.SelfHint {
	return cell.SelfHint{NodeID: nodeID, Port: cfg.Port, Bind: cfg.Bind}
}

// handleHUP takes SIGHUP so that it never ends the server (Go's default
// for it is to exit, 129). Redis ignores it, so that a closed terminal or
// a logrotate "kill -HUP" leaves it running; a standalone server does the
// same and logs that it did. In cluster mode SIGHUP re-reads the topology
// file, so slots can be given to other nodes without a restart; a file
// that does not parse, or that makes this node another one, is logged and
// ignored: the running topology stays. It returns a function that stops
// listening.
func handleHUP(cfg cell.Config, srv *cell.Server, log *slog.Logger) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
			}
			if cfg.Cluster == nil {
				log.Info("SIGHUP received and ignored, as redis-server does (SIGTERM or SHUTDOWN stop the server)")
				continue
			}
			reloadTopology(cfg, srv, log)
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// reloadTopology re-reads the topology file for SIGHUP in cluster mode.
func reloadTopology(cfg cell.Config, srv *cell.Server, log *slog.Logger) {
	self := srv.Topology().Myself().ID
	t, err := cell.LoadTopology(cfg.ClusterConfigFile, cell.SelfHint{NodeID: self})
	if err == nil {
		err = srv.SetTopology(t)
	}
	if err != nil {
		log.Warn("topology not reloaded", "file", cfg.ClusterConfigFile, "err", err)
		return
	}
	log.Info("topology reloaded", "file", cfg.ClusterConfigFile, "nodes", len(t.Nodes), "myself", self)
}
