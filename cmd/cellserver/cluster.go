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

// reloadTopologyOnHUP re-reads the topology file on SIGHUP in cluster
// mode, so slots can be given to other nodes without a restart. A file that
// does not parse, or that makes this node another one, is logged and
// ignored: the running topology stays. It returns a function that stops
// listening.
func reloadTopologyOnHUP(cfg cell.Config, srv *cell.Server, log *slog.Logger) func() {
	if cfg.Cluster == nil {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	self := srv.Topology().Myself().ID
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
			}
			t, err := cell.LoadTopology(cfg.ClusterConfigFile, cell.SelfHint{NodeID: self})
			if err == nil {
				err = srv.SetTopology(t)
			}
			if err != nil {
				log.Warn("topology not reloaded", "file", cfg.ClusterConfigFile, "err", err)
				continue
			}
			log.Info("topology reloaded", "file", cfg.ClusterConfigFile, "nodes", len(t.Nodes), "myself", self)
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}
