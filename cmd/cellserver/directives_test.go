package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cellserver.conf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSplitCommandLine(t *testing.T) {
	tests := []struct {
		args []string
		file string
		want [][]string // name, args...
		err  bool
	}{
		{nil, "", nil, false},
		{[]string{"--port", "6380"}, "", [][]string{{"port", "6380"}}, false},
		{[]string{"-port=6380", "--bind", "127.0.0.1", "::1"}, "", [][]string{{"port", "6380"}, {"bind", "127.0.0.1", "::1"}}, false},
		{[]string{"/etc/c.conf", "--rename-command", "CONFIG", ""}, "/etc/c.conf", [][]string{{"rename-command", "CONFIG", ""}}, false},
		{[]string{"--list-max-listpack-size", "-2"}, "", [][]string{{"list-max-listpack-size", "-2"}}, false},
		{[]string{"--save", "--port", "1"}, "", [][]string{{"save"}, {"port", "1"}}, false},
		{[]string{"--Port", "1"}, "", [][]string{{"port", "1"}}, false},
		{[]string{"a.conf", "b.conf"}, "", nil, true},
	}
	for _, tt := range tests {
		file, ds, err := splitCommandLine(tt.args)
		if (err != nil) != tt.err {
			t.Errorf("%q: err %v", tt.args, err)
			continue
		}
		if err != nil {
			continue
		}
		var got [][]string
		for _, d := range ds {
			got = append(got, append([]string{d.name}, d.args...))
		}
		if file != tt.file || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: file %q directives %q, want %q %q", tt.args, file, got, tt.file, tt.want)
		}
	}
}

// TestConfigFile reads redis.conf syntax: comments, quotes, escapes, any
// case, multi-word values, CONFIG parameters without flags, include.
func TestConfigFile(t *testing.T) {
	inc := writeConf(t, "maxmemory-policy allkeys-random\n")
	conf := writeConf(t, `# a comment
  # an indented comment

PORT 7001
bind 127.0.0.1   ::1
requirepass "p\x41ss word"
databases 4
timeout 30
maxmemory 10mb
save 3600 1 300 100
save ""
client-output-buffer-limit normal 1mb 512kb 10
rename-command FLUSHALL ""
rename-command config 'cfg'
proto-max-bulk-len 1mb
include `+inc+`
`)
	cfg, err := parseFlags([]string{conf}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 7001 || !reflect.DeepEqual(cfg.Bind, []string{"127.0.0.1", "::1"}) ||
		cfg.RequirePass != "pAss word" || cfg.Databases != 4 || cfg.ProtoMaxBulkLen != 1<<20 {
		t.Errorf("flags from file: %+v", cfg)
	}
	wantParams := map[string]string{
		"port": "7001", "bind": "127.0.0.1 ::1", "requirepass": "pAss word",
		"timeout": "30", "maxmemory": "10485760", "save": "", "proto-max-bulk-len": "1048576",
		"client-output-buffer-limit": "normal 1048576 524288 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"maxmemory-policy":           "allkeys-random",
	}
	for k, v := range wantParams {
		if cfg.Params[k] != v {
			t.Errorf("Params[%q] = %q, want %q", k, cfg.Params[k], v)
		}
	}
	if want := [][2]string{{"FLUSHALL", ""}, {"config", "cfg"}}; !reflect.DeepEqual(cfg.RenameCommands, want) {
		t.Errorf("renames %q, want %q", cfg.RenameCommands, want)
	}
	if cfg.ConfigFile != conf {
		t.Errorf("ConfigFile %q, want %q", cfg.ConfigFile, conf)
	}
}

// TestFlagsOverrideFile: the command line comes after the file.
func TestFlagsOverrideFile(t *testing.T) {
	conf := writeConf(t, "port 7001\ntimeout 30\nhz 20\n")
	cfg, err := parseFlags([]string{conf, "--port", "7002", "--timeout=40"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 7002 || cfg.Params["timeout"] != "40" || cfg.Params["port"] != "7002" || cfg.Hz != 20 {
		t.Errorf("port %d timeout %q hz %d", cfg.Port, cfg.Params["timeout"], cfg.Hz)
	}
	// The last of two lines wins, in the file too.
	cfg, err = parseFlags([]string{writeConf(t, "port 1\nport 2\n")}, &bytes.Buffer{})
	if err != nil || cfg.Port != 2 {
		t.Errorf("port %d err %v", cfg.Port, err)
	}
}

// TestConfigFileErrors: Redis's reasons, the file and the line, exit 1.
func TestConfigFileErrors(t *testing.T) {
	tests := []struct {
		text, line, reason string
	}{
		{"port 1\n# c\nfoo bar\n", "at line 3\n>>> 'foo bar'", "Bad directive or wrong number of arguments"},
		{"bind \"127.0.0.1\n", "at line 1", "Unbalanced quotes in configuration line"},
		{"port\n", "at line 1", "wrong number of arguments"},
		{"timeout abc\n", "at line 1\n>>> 'timeout abc'", "argument couldn't be parsed into an integer"},
		{"timeout 1 2\n", "at line 1", "wrong number of arguments"},
		{"maxmemory-policy foo\n", "at line 1", "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
		{"rename-command NOSUCH foo\n", "at line 1", "No such command in rename-command"},
		{"rename-command get set\n", "at line 1", "Target command name already exists"},
		{"rename-command get\n", "at line 1", "wrong number of arguments"},
		{"client-output-buffer-limit normal 1 2\n", "at line 1", "Wrong number of arguments in buffer limit configuration."},
		{"client-output-buffer-limit bogus 1 2 3\n", "at line 1", "Invalid client class specified in buffer limit configuration."},
		{"port x\n", "at line 1", "argument couldn't be parsed into an integer"},
		{"shards 3\n", "at line 1", "must be a power of two"},
		{"shards x\n", "at line 1", "parse error"},
		{"include\n", "at line 1", "wrong number of arguments"},
	}
	for _, tt := range tests {
		conf := writeConf(t, tt.text)
		var out bytes.Buffer
		code := run([]string{conf}, &out, &out)
		msg := out.String()
		if code != 1 || !strings.Contains(msg, "*** FATAL CONFIG FILE ERROR") ||
			!strings.Contains(msg, conf+", "+tt.line) || !strings.Contains(msg, tt.reason) {
			t.Errorf("%q: exit %d, output:\n%s\nwant line %q and %q", tt.text, code, msg, tt.line, tt.reason)
		}
	}
	// A file that cannot be read.
	var out bytes.Buffer
	if code := run([]string{filepath.Join(t.TempDir(), "missing.conf")}, &out, &out); code != 1 ||
		!strings.Contains(out.String(), "can't open config file") {
		t.Errorf("missing file: exit %d %q", code, out.String())
	}
	// An include of itself ends.
	dir := t.TempDir()
	self := filepath.Join(dir, "self.conf")
	os.WriteFile(self, []byte("include "+self+"\n"), 0o644)
	out.Reset()
	if code := run([]string{self}, &out, &out); code != 1 || !strings.Contains(out.String(), "include nested too deeply") {
		t.Errorf("self include: exit %d %q", code, out.String())
	}
}

// TestCommandLineErrors: a bad flag is exit 2, as before the file came.
func TestCommandLineErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--nosuch", "1"}, {"--port", "x"}, {"--timeout", "-1"}, {"--rename-command", "GET"},
		{"a.conf", "stray"},
	} {
		var out bytes.Buffer
		if code := run(args, &out, &out); code != 2 {
			t.Errorf("%q: exit %d, output %q", args, code, out.String())
		}
	}
}

// TestHelpAndVersion: --version and --help print on stdout (so that
// "cellserver --version | head -1" shows it) and exit 0; --help names
// flags --name, as the rest of the documentation does.
func TestHelpAndVersion(t *testing.T) {
	for _, arg := range []string{"--version", "--help"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{arg}, &stdout, &stderr); code != 0 || stdout.Len() == 0 || stderr.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", arg, code, stdout.String(), stderr.String())
		}
	}
	var out bytes.Buffer
	if _, err := parseFlags([]string{"--version"}, &out); !errors.Is(err, flag.ErrHelp) ||
		!strings.HasPrefix(out.String(), "cellserver v="+version+" redis_version=7.0.15") {
		t.Errorf("--version: %v %q", err, out.String())
	}
	out.Reset()
	if _, err := parseFlags([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(out.String(), "\n  --rename-command NAME NEWNAME\n") || !strings.Contains(out.String(), "\n  --port int\n") ||
		!strings.Contains(out.String(), "configuration file") || strings.Contains(out.String(), "\n  -port") {
		t.Errorf("--help: %v %q", err, out.String())
	}
}

// TestBoolFlagsTakeYesNo: a boolean flag reads yes/no on a line, as
// redis.conf writes booleans, and stands alone on the command line.
func TestBoolFlagsTakeYesNo(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	b := fs.Bool("lua-allow-undeclared-keys", false, "")
	cfg, _ := parseFlags(nil, &bytes.Buffer{})
	for _, tt := range []struct {
		args []string
		want bool
	}{{[]string{"yes"}, true}, {[]string{"no"}, false}, {nil, true}, {[]string{"false"}, false}} {
		if err := applyDirective(fs, &cfg, directive{name: "lua-allow-undeclared-keys", args: tt.args}); err != nil || *b != tt.want {
			t.Errorf("%q: %v %v", tt.args, *b, err)
		}
	}
}

// TestDeployConfigParses: the sample file the container image ships reads
// without error and means what its comments say.
func TestDeployConfigParses(t *testing.T) {
	cfg, err := parseFlags([]string{"../../deploy/cellserver.conf"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 6379 || cfg.Dir != "/data" || !reflect.DeepEqual(cfg.Bind, []string{"*", "-::*"}) ||
		cfg.Params["protected-mode"] != "no" || cfg.Params["timeout"] != "0" {
		t.Errorf("%+v", cfg)
	}
}

// TestSystemdUnitAsShipped: the systemd unit and the configuration its
// instructions install, both unedited, listen on loopback only with
// protected mode on (metrics too), signal readiness (Type=notify with
// supervised systemd), and do not refuse a restart after exit code 1,
// which a port still in use gives.
func TestSystemdUnitAsShipped(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/cellserver.service")
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, l := range strings.Split(string(unit), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			settings[k] = v
		}
	}
	if settings["Type"] != "notify" || settings["NotifyAccess"] != "main" ||
		slices.Contains(strings.Fields(settings["RestartPreventExitStatus"]), "1") {
		t.Errorf("unit: %v", settings)
	}
	args := strings.Fields(settings["ExecStart"])
	if len(args) < 2 || args[1] != "/etc/cellserver/cellserver.conf" ||
		!strings.Contains(string(unit), "install -m 0644 deploy/cellserver-systemd.conf /etc/cellserver/cellserver.conf") {
		t.Fatalf("ExecStart %q does not read the file the instructions install", args)
	}
	args[1] = "../../deploy/cellserver-systemd.conf"
	cfg, err := parseFlags(args[1:], &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Bind, []string{"127.0.0.1", "-::1"}) || cfg.Params["protected-mode"] != "yes" ||
		cfg.RequirePass != "" || cfg.MetricsBind != "" || cfg.Params["supervised"] != "systemd" || cfg.Dir != "/var/lib/cellserver" {
		t.Errorf("as shipped: bind %q protected-mode %q metrics-bind %q supervised %q dir %q",
			cfg.Bind, cfg.Params["protected-mode"], cfg.MetricsBind, cfg.Params["supervised"], cfg.Dir)
	}
	cfg.MetricsPort = 9121 // as its commented line enables it
	if a := metricsAddr(cfg); a != "127.0.0.1:9121" {
		t.Errorf("metrics would listen on %s", a)
	}
}

// TestLuaAllowUndeclaredKeys: the setting is on by default and turned off
// by no, on the command line and alone as yes.
func TestLuaAllowUndeclaredKeys(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		strict bool
	}{
		{nil, false},
		{[]string{"--lua-allow-undeclared-keys", "no"}, true},
		{[]string{"--lua-allow-undeclared-keys=no"}, true},
		{[]string{"--lua-allow-undeclared-keys", "yes"}, false},
		{[]string{"--lua-allow-undeclared-keys"}, false},
	} {
		cfg, err := parseFlags(tt.args, &bytes.Buffer{})
		if err != nil || cfg.LuaStrictKeys != tt.strict {
			t.Errorf("%q: strict %v, err %v", tt.args, cfg.LuaStrictKeys, err)
		}
	}
}
