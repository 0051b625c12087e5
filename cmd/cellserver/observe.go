package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/cellserver/cellserver/cell"
)

// openLog opens --logfile for appending, or returns stderr when it is
// empty.
func openLog(path string, stderr io.Writer) (io.Writer, func(), error) {
	if path == "" {
		return stderr, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("--logfile: %v", err)
	}
	return f, func() { f.Close() }, nil
}

// metricsAddr is where /metrics listens: --metrics-bind, else the first
// --bind address, else loopback.
func metricsAddr(cfg cell.Config) string {
	host := cfg.MetricsBind
	if host == "" && len(cfg.Bind) > 0 {
		host = cfg.Bind[0]
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(cfg.MetricsPort))
}

// startMetrics serves GET /metrics when --metrics-port is set. The
// returned func stops it.
func startMetrics(cfg cell.Config, srv *cell.Server, log *slog.Logger) (func(), error) {
	if cfg.MetricsPort == 0 {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", metricsAddr(cfg))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", srv.MetricsHandler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	log.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	}, nil
}
