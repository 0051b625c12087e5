package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestObservabilityFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		level   slog.Level
		metrics string
		err     string
	}{
		{nil, slog.LevelInfo, "", ""},
		{[]string{"--loglevel", "DEBUG"}, slog.LevelDebug, "", ""},
		{[]string{"--loglevel", "verbose"}, slog.LevelDebug + 2, "", ""},
		{[]string{"--loglevel", "warning"}, slog.LevelWarn, "", ""},
		{[]string{"--loglevel", "nothing"}, 0, "", "--loglevel"},
		{[]string{"--metrics-port", "9121"}, slog.LevelInfo, "127.0.0.1:9121", ""},
		{[]string{"--metrics-port", "9121", "--bind", "10.0.0.1 ::1"}, slog.LevelInfo, "10.0.0.1:9121", ""},
		{[]string{"--metrics-port", "9121", "--metrics-bind", "::1"}, slog.LevelInfo, "[::1]:9121", ""},
		{[]string{"--metrics-port", "9121", "--bind", ""}, slog.LevelInfo, "127.0.0.1:9121", ""},
		{[]string{"--metrics-port", "70000"}, 0, "", "--metrics-port"},
	} {
		cfg, err := parseFlags(tc.args, io.Discard)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one naming %s", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got := cfg.LogLevel.Level(); got != tc.level {
			t.Errorf("%q: level %v, want %v", tc.args, got, tc.level)
		}
		if tc.metrics != "" {
			if got := metricsAddr(cfg); got != tc.metrics {
				t.Errorf("%q: metrics at %s, want %s", tc.args, got, tc.metrics)
			}
		}
	}
}
