package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cellserver/cellserver/cell"
	"github.com/cellserver/cellserver/resp"
)

// Settings come as directives, the way redis-server takes them: lines of a
// configuration file in redis.conf syntax, then the command line, where
// each --name starts a directive and the words up to the next --name are
// its arguments. Both end up as the same list, applied in order, so a flag
// overrides the file and the last of two lines wins, as in Redis.
//
// A directive's name is a flag (flags.go) or, failing that, a CONFIG
// parameter (cell's table), which is validated as CONFIG SET would and
// handed to the server as a start-up value.

// directive is one setting: a name and its arguments, and where it was
// written for error messages.
type directive struct {
	name string
	args []string
	file string // "" for the command line
	line int
	text string // the line as written
}

// fatalConfigError is a directive the server cannot honour. It prints as
// Redis's "FATAL CONFIG FILE ERROR" block, naming the file too.
type fatalConfigError struct {
	d      directive
	reason string
}

func (e *fatalConfigError) Error() string {
	where := "Reading the configuration file " + e.d.file + ", at line " + fmt.Sprint(e.d.line)
	if e.d.file == "" {
		where = "Reading the command line, at --" + e.d.name
	}
	return fmt.Sprintf("\n*** FATAL CONFIG FILE ERROR (cellserver %s, Redis %s) ***\n%s\n>>> '%s'\n%s",
		version, cell.DefaultConfig().Version, where, e.d.text, e.reason)
}

// maxIncludeDepth bounds nested include directives (a file including
// itself would otherwise never end).
const maxIncludeDepth = 16

// readConfigFile reads a redis.conf-style file: one directive per line,
// words split by Redis's sdssplitargs rules (quotes, \x escapes), blank
// lines and lines starting with '#' ignored, names in any case. "include
// path" reads another file in its place. "-" reads standard input.
func readConfigFile(path string, depth int) ([]directive, error) {
	f := os.Stdin
	if path != "-" {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, fmt.Errorf("Fatal error, can't open config file '%s': %v", path, err)
		}
		defer f.Close()
	}
	data, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("Fatal error, can't open config file '%s': %v", path, err)
	}
	var out []directive
	for i, raw := range bytes.Split(data, []byte("\n")) {
		line := bytes.Trim(raw, " \t\r\n")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		d := directive{file: path, line: i + 1, text: string(line)}
		words, ok := resp.SplitArgs(line, nil)
		if !ok {
			return nil, &fatalConfigError{d, cell.MsgUnbalancedQuotes}
		}
		if len(words) == 0 {
			continue
		}
		d.name = strings.ToLower(string(words[0]))
		for _, w := range words[1:] {
			d.args = append(d.args, string(w))
		}
		if d.name == "include" {
			if len(d.args) != 1 {
				return nil, &fatalConfigError{d, cell.MsgWrongArgs}
			}
			if depth >= maxIncludeDepth {
				return nil, &fatalConfigError{d, "include nested too deeply"}
			}
			inc, err := readConfigFile(d.args[0], depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, inc...)
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// maxConfigFile bounds what a configuration file may hold, so that
// "include /dev/zero" is an error and not an endless read.
const maxConfigFile = 64 << 20

func readAll(f *os.File) ([]byte, error) {
	var b bytes.Buffer
	n, err := b.ReadFrom(io.LimitReader(bufio.NewReader(f), maxConfigFile+1))
	if err == nil && n > maxConfigFile {
		err = errors.New("larger than 64 MiB")
	}
	return b.Bytes(), err
}

// splitCommandLine turns argv into directives. An argument starting with
// "--" (or "-" and a letter, for Go-style -port) names a setting; an
// "=value" in it is its one argument, otherwise the arguments up to the
// next name are. A first argument that names no setting is the
// configuration file.
func splitCommandLine(args []string) (file string, ds []directive, err error) {
	isName := func(a string) bool {
		return strings.HasPrefix(a, "--") && len(a) > 2 ||
			len(a) > 1 && a[0] == '-' && (a[1] >= 'a' && a[1] <= 'z' || a[1] >= 'A' && a[1] <= 'Z')
	}
	i := 0
	if len(args) > 0 && !isName(args[0]) {
		file, i = args[0], 1
	}
	for ; i < len(args); i++ {
		a := args[i]
		if !isName(a) {
			return "", nil, fmt.Errorf("unexpected argument %q (settings are --name value, a configuration file comes first)", a)
		}
		name := strings.TrimLeft(a, "-")
		d := directive{name: strings.ToLower(name), text: a}
		if k := strings.IndexByte(name, '='); k >= 0 {
			d.name, d.args = strings.ToLower(name[:k]), []string{name[k+1:]}
		} else {
			for i+1 < len(args) && !isName(args[i+1]) {
				i++
				d.args = append(d.args, args[i])
			}
		}
		d.text = strings.TrimSpace("--" + d.name + " " + quoteArgs(d.args))
		ds = append(ds, d)
	}
	return file, ds, nil
}

// quoteArgs prints words so that SplitArgs reads them back.
func quoteArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(cell.ConfigQuote(a))
	}
	return b.String()
}

// argsSetter is a flag that takes several words (rename-command NAME
// NEWNAME, client-output-buffer-limit ...): it gets them unjoined, so an
// empty word survives.
type argsSetter interface {
	SetArgs(args []string) error
}

// applyDirectives sets each directive's flag, or records it as a CONFIG
// parameter's start-up value in cfg.Params. It returns the names of the
// flags it set.
func applyDirectives(fs *flag.FlagSet, cfg *cell.Config, ds []directive) error {
	for _, d := range ds {
		if err := applyDirective(fs, cfg, d); err != nil {
			return &fatalConfigError{d, err.Error()}
		}
	}
	return nil
}

func applyDirective(fs *flag.FlagSet, cfg *cell.Config, d directive) error {
	switch d.name {
	case "help", "h", "version", "v", "include":
		return cell.BadDirectiveError
	}
	f := fs.Lookup(d.name)
	if f == nil {
		v, err := cell.CheckParam(d.name, d.args)
		if err != nil {
			return err
		}
		cell.SetParam(cfg, d.name, v)
		return nil
	}
	if as, ok := f.Value.(argsSetter); ok {
		return as.SetArgs(d.args)
	}
	if len(d.args) == 0 {
		// A boolean flag alone means yes, as Go's flag package reads it.
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			return f.Value.Set("true")
		}
		// redis-server takes "--save" alone as save "".
		if d.name != "save" {
			return errors.New(cell.MsgWrongArgs)
		}
	}
	v := strings.Join(d.args, " ")
	pargs := d.args
	if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
		// Go's spelling for the flag, redis.conf's for the parameter.
		switch strings.ToLower(v) {
		case "yes", "true":
			v, pargs = "true", []string{"yes"}
		case "no", "false":
			v, pargs = "false", []string{"no"}
		}
	}
	pv, perr := cell.CheckParam(d.name, pargs)
	if perr != nil && configParamKnown(d.name) {
		return perr // refused as redis-server refuses it, in its words
	}
	if err := f.Value.Set(v); err != nil {
		return err
	}
	// A flag that is also a CONFIG parameter shows its start-up value
	// there, when CONFIG SET would accept it.
	if perr == nil {
		cell.SetParam(cfg, d.name, pv)
	}
	return nil
}

// absPath makes the configuration file's path absolute, so CONFIG
// REWRITE finds it whatever the working directory becomes.
func absPath(p string) string {
	if p == "-" || p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// configParamKnown reports whether name is a CONFIG parameter.
func configParamKnown(name string) bool {
	_, err := cell.CheckParam(name, []string{""})
	return !errors.Is(err, cell.BadDirectiveError)
}
