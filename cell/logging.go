package cell

import (
	"log/slog"
)

// Redis's four log levels as slog levels. "verbose" sits between debug and
// notice; notice is slog's Info and warning its Warn. The Logger's level is
// a slog.LevelVar so that CONFIG SET loglevel changes it live.
//
// What is logged where: start and stop at notice, client connections and
// disconnections at debug, protocol errors and clients closed at a limit
// (maxclients, query buffer, monitor output) at warning.

// LevelVerbose is Redis's "verbose".
const LevelVerbose = slog.LevelDebug + 2

var logLevels = []struct {
	name  string
	level slog.Level
}{
	{"debug", slog.LevelDebug}, {"verbose", LevelVerbose},
	{"notice", slog.LevelInfo}, {"warning", slog.LevelWarn},
}

// ParseLogLevel reads a Redis level name, in any case.
func ParseLogLevel(name string) (slog.Level, bool) {
	for _, l := range logLevels {
		if equalFoldASCII(l.name, name) {
			return l.level, true
		}
	}
	return 0, false
}

// LogLevelName is the Redis name of the highest Redis level at or below l.
func LogLevelName(l slog.Level) string {
	name := logLevels[0].name
	for _, x := range logLevels {
		if l >= x.level {
			name = x.name
		}
	}
	return name
}

// ReplaceLogLevel is a slog.HandlerOptions.ReplaceAttr that prints the
// level as Redis names it (DEBUG, VERBOSE, NOTICE, WARNING, ERROR).
func ReplaceLogLevel(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok {
			if l >= slog.LevelError {
				return slog.String(slog.LevelKey, "ERROR")
			}
			return slog.String(slog.LevelKey, upper(LogLevelName(l)))
		}
	}
	return a
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func init() {
	lv := configParamByName("loglevel")
	lv.get = func(s *Server) string { return LogLevelName(s.cfg.LogLevel.Level()) }
	lv.apply = func(s *Server, v string) string {
		l, _ := ParseLogLevel(v)
		s.cfg.LogLevel.Set(l)
		return ""
	}
	configParamByName("logfile").get = func(s *Server) string { return s.cfg.LogFile }
}
