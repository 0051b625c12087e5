// Command cellserver runs the server: a Redis 7.0 + redis-cell compatible
// rate-limiting server. Flags are named as redis-server's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cellserver/cellserver/cell"
)

// version is cellserver's own release; clients see the Redis version it
// is compatible with (cell.Config.Version).
const version = "0.1.0"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run serves with the settings in args; --help and --version print on
// stdout, errors and the log go to stderr.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "migrate" {
		return runMigrate(args[1:], stdout, stderr)
	}
	cfg, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "cellserver:", err)
		return exitCode(err)
	}
	if pingMode {
		return pingServer(cfg, stderr) // ping.go
	}
	logOut, closeLog, err := openLog(cfg.LogFile, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "cellserver:", err)
		return 1
	}
	defer closeLog()
	// Until handleHUP takes it, a SIGHUP (a closed terminal, logrotate)
	// must not end the server while it loads.
	signal.Ignore(syscall.SIGHUP)
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: cfg.LogLevel, ReplaceAttr: cell.ReplaceLogLevel}))
	cfg.Logger = log
	if d, err := time.ParseDuration(os.Getenv("CELLSERVER_TEST_SLOW_LOAD")); err == nil {
		cfg.SlowLoad = d // tests only: watch a server while it loads
	}
	// The store is opened, not loaded, so that the server listens first:
	// a port in use is reported at once, and clients get -LOADING while
	// it loads, as redis-server answers them.
	srv, err := cell.OpenStore(cfg)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	if err := srv.Listen(); err != nil {
		srv.Shutdown(context.Background()) // saves nothing: not loaded
		log.Error("cannot listen", "err", err)
		return 1
	}
	stopMetrics, err := startMetrics(cfg, srv, log)
	if err != nil {
		srv.Shutdown(context.Background())
		log.Error("cannot listen for metrics", "err", err)
		return 1
	}
	defer stopMetrics()
	var addrs []string
	for _, a := range srv.Addrs() {
		addrs = append(addrs, a.String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	notify := newNotifier(cfg) // sdnotify.go
	notify.send("STATUS=Loading the dataset")
	if err := srv.Load(); err != nil {
		log.Error("cannot load the data", "err", err)
		return 1
	}
	// Catch SIGTERM before telling anyone we are ready, so that a stop
	// sent right after READY=1 gets its orderly shutdown (and STOPPING=1).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if sent, err := notify.send("READY=1\nSTATUS=Ready to accept connections"); err != nil {
		log.Warn("systemd readiness not sent", "socket", os.Getenv("NOTIFY_SOCKET"), "err", err)
	} else if sent {
		log.Info("systemd told: ready", "socket", os.Getenv("NOTIFY_SOCKET"))
	}
	log.Info("cellserver ready", "addr", strings.Join(addrs, ","), "version", version,
		"redis_version", cfg.Version, "databases", cfg.Databases, "shards", srv.Keyspace().Shards(),
		"requirepass", cfg.RequirePass != "", "maxclients", cfg.MaxClients, "dir", cfg.Dir,
		"appendonly", cfg.AppendOnly, "appendfsync", cfg.AppendFsync)

	stopHUP := handleHUP(cfg, srv, log) // cluster.go
	defer stopHUP()
	select {
	case sig := <-sigs:
		log.Info("shutting down", "signal", sig.String())
	case <-srv.ExitRequested():
		log.Info("shutting down", "by", "SHUTDOWN")
	case err := <-served:
		if err != nil {
			log.Error("serve failed", "err", err)
			return 1
		}
	}
	notify.send("STOPPING=1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("clients cut off at shutdown", "err", err)
	}
	log.Info("bye")
	return 0
}
