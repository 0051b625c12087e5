package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/cellserver/cellserver/cell"
)

// clusterFlags checks the cluster flags and loads the topology file into
// cfg. A bad file stops the server at start, with the line at fault.
func clusterFlags(cfg *cell.Config, enabled, nodeID string) error {
	switch enabled {
	case "no":
		return nil
	case "yes":
	default:
		return fmt.Errorf("--cluster-enabled %q: must be yes or no", enabled)
	}
	if cfg.ClusterConfigFile == "" {
		return fmt.Errorf("--cluster-enabled yes needs --cluster-config-file (the topology every node shares)")
	}
	t, err := cell.LoadTopology(cfg.ClusterConfigFile, selfHint(cfg, nodeID))
	if err != nil {
		return fmt.Errorf("--cluster-config-file: %v", err)
	}
	cfg.Cluster = t
	return nil
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
