package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/cellserver/cellserver/cell"
	"github.com/cellserver/cellserver/resp"
)

// opsUsage ends --help: the settings that are not flags of their own.
const opsUsage = `
Any CONFIG parameter (CONFIG GET *) is also a setting: --timeout 300,
--maxmemory 1gb, --maxmemory-policy allkeys-lru, --protected-mode no,
--client-output-buffer-limit "normal 0 0 0", --tls-port 6380 ...
A first argument that is not a flag is a configuration file in redis.conf
syntax with the same names; flags after it override it.
  -v, --version  print the version and build information
`

// addOpsFlags registers the operational flags that are not CONFIG
// parameters.
func addOpsFlags(fs *flag.FlagSet, cfg *cell.Config) {
	pingMode = false
	fs.BoolVar(&pingMode, "ping", false, "do not serve: PING the server these settings describe, exit 0 if it answers (health checks)")
	fs.Var(&renameFlag{&cfg.RenameCommands}, "rename-command",
		"`NAME NEWNAME`: serve command NAME as NEWNAME; \"\" disables it (repeatable)")
	fs.Var(&userFlag{&cfg.Users}, "user",
		"`NAME RULE...`: an ACL user and its rules, as ACL SETUSER takes them (repeatable)")
}

// userFlag collects `user` lines (ACL users, as redis.conf declares them).
type userFlag struct{ v *[][]string }

func (f *userFlag) String() string {
	if f == nil || f.v == nil {
		return ""
	}
	var parts []string
	for _, u := range *f.v {
		parts = append(parts, quoteArgs(u))
	}
	return strings.Join(parts, ", ")
}

// Set takes the name and rules as one word (--user="svc on >pw ~svc:*").
func (f *userFlag) Set(s string) error { return setWords(s, f.SetArgs) }

func (f *userFlag) SetArgs(args []string) error {
	if len(args) < 1 {
		return errors.New(cell.MsgWrongArgs)
	}
	if err := cell.CheckUserLine(args); err != nil {
		return err
	}
	*f.v = append(*f.v, append([]string(nil), args...))
	return nil
}

// parseDirectives reads the configuration file named by the first
// argument, if any, then the command line, and applies both in that order.
// --help and --version print and return flag.ErrHelp (exit 0).
func parseDirectives(fs *flag.FlagSet, cfg *cell.Config, args []string, out io.Writer) ([]directive, error) {
	file, cmdline, err := splitCommandLine(args)
	if err != nil {
		return nil, err
	}
	for _, d := range cmdline {
		switch d.name {
		case "help", "h":
			fs.Usage()
			return nil, flag.ErrHelp
		case "version", "v":
			fmt.Fprintln(out, versionString())
			return nil, flag.ErrHelp
		}
	}
	var all []directive
	if file != "" {
		all, err = readConfigFile(file, 0)
		if err != nil {
			return nil, err
		}
		cfg.ConfigFile = absPath(file)
	}
	all = append(all, cmdline...)
	if err := applyDirectives(fs, cfg, all); err != nil {
		return all, err
	}
	if err := cell.CheckRenames(cfg.RenameCommands); err != nil {
		for _, d := range all {
			if d.name == "rename-command" {
				return all, &fatalConfigError{d, err.Error()}
			}
		}
		return all, err
	}
	return all, nil
}

// blameDirective turns a check of the final settings that failed
// ("--shards 3: must be a power of two") into the error of the line that
// set that value last, so a file's mistake names the file and its line.
func blameDirective(ds []directive, err error) error {
	var fe *fatalConfigError
	if err == nil || errors.As(err, &fe) || errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "--") {
		return err
	}
	name := strings.TrimPrefix(msg, "--")
	if i := strings.IndexAny(name, " :"); i >= 0 {
		name = name[:i]
	}
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].name == name {
			return &fatalConfigError{ds[i], msg}
		}
	}
	return err
}

// exitCode is the status for a start-up error: 1 for a configuration file
// that cannot be read or used, as redis-server exits; 2 for a bad flag.
func exitCode(err error) int {
	var fe *fatalConfigError
	if errors.As(err, &fe) && fe.d.file != "" {
		return 1
	}
	if strings.HasPrefix(err.Error(), "Fatal error, can't open config file") {
		return 1
	}
	return 2
}

// buildRevision is the VCS revision given at link time (-ldflags "-X
// main.buildRevision=..."), for builds without the repository's .git
// (container builds); the Go toolchain's own stamp is preferred.
var buildRevision string

// versionString is what --version prints: our release, the Redis version
// clients see, and the build's VCS stamp when the binary carries one.
func versionString() string {
	s := fmt.Sprintf("cellserver v=%s redis_version=%s go=%s %s/%s",
		version, cell.DefaultConfig().Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	stamped := false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision", "vcs.time", "vcs.modified":
				s += " " + kv.Key + "=" + kv.Value
				stamped = true
			}
		}
	}
	if !stamped && buildRevision != "" {
		s += " vcs.revision=" + buildRevision
	}
	return s
}

// renameFlag collects rename-command pairs.
type renameFlag struct{ v *[][2]string }

func (f *renameFlag) String() string {
	if f == nil || f.v == nil {
		return ""
	}
	var parts []string
	for _, p := range *f.v {
		parts = append(parts, p[0]+" "+cell.ConfigQuote(p[1]))
	}
	return strings.Join(parts, ", ")
}

// Set takes "NAME NEWNAME" as one word (-rename-command="CONFIG \"\"").
func (f *renameFlag) Set(s string) error { return setWords(s, f.SetArgs) }

// setWords splits a flag's one word as a configuration line's words and
// hands them to set.
func setWords(s string, set func([]string) error) error {
	words, ok := resp.SplitArgs([]byte(s), nil)
	if !ok {
		return errors.New(cell.MsgUnbalancedQuotes)
	}
	args := make([]string, len(words))
	for i, w := range words {
		args[i] = string(w)
	}
	return set(args)
}

func (f *renameFlag) SetArgs(args []string) error {
	if len(args) != 2 {
		return errors.New(cell.MsgWrongArgs)
	}
	*f.v = append(*f.v, [2]string{args[0], args[1]})
	return nil
}
