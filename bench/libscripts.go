package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The scripts rate limiting libraries send, read from the pinned module
// sources in the Go module cache (go.mod pins the versions): the bench
// sends the exact bodies the libraries send, without a copy of them here.

// libScript is a script a Go module defines as a raw string literal.
type libScript struct {
	module, file string
	// start is the text just before the body's opening backquote.
	start string
}

var (
	redisRateAllowN = libScript{"github.com/go-redis/redis_rate/v10", "lua.go", "var allowN = redis.NewScript("}
	ululeIncr       = libScript{"github.com/ulule/limiter/v3", "drivers/store/redis/store.go", "luaIncrScript = "}
)

// body reads the script from the module's source.
func (s libScript) body() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", s.module).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %v", s.module, err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), s.file))
	if err != nil {
		return "", err
	}
	_, rest, ok := strings.Cut(string(src), s.start+"`")
	if !ok {
		return "", fmt.Errorf("%s/%s: no %q", s.module, s.file, s.start)
	}
	body, _, ok := strings.Cut(rest, "`")
	if !ok {
		return "", fmt.Errorf("%s/%s: unterminated script", s.module, s.file)
	}
	return body, nil
}
