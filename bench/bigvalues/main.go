// Command bigvalues measures what a write to a big value costs a server
// with persistence on: the bytes the server process writes (write_bytes of
// /proc/PID/io, which counts the pages it dirties, a file's or a mapping's)
// and the commands per second of one client sending one command at a time.
//
//	go run ./bench/bigvalues -cellserver ./cellserver [-redis-server /usr/bin/redis-server]
//
// The cases, each on a fresh server with appendfsync everysec:
//
//   - APPEND of 10 bytes, 50 times, to a string of 50 MB;
//   - HSET of one field, 200 times, on a hash of 100,000 fields;
//   - LPUSH of one element, 2,000 times, on a list of 20,000 elements
//     and then on one of 120,000.
//
// Before each measured loop the value is built, saved (SAVE) and left
// two seconds, so that the build's own writes are not counted; after it
// the loop's writes are given two seconds to reach the disk (everysec).
// It prints a markdown table.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
	"github.com/redis/go-redis/v9"
)

func main() {
	cell := flag.String("cellserver", "", "cellserver binary (required)")
	redisBin := flag.String("redis-server", "", "redis-server binary: also measure it")
	flag.Parse()
	if *cell == "" {
		fmt.Fprintln(os.Stderr, "bigvalues: -cellserver is required")
		os.Exit(2)
	}
	servers := []struct{ name, bin string }{{"cellserver", *cell}}
	if *redisBin != "" {
		servers = append(servers, struct{ name, bin string }{"redis", *redisBin})
	}
	fmt.Println("| server | case | commands | bytes written | bytes a command | commands/s |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for _, s := range servers {
		for _, c := range cases {
			row, err := measure(s.name, s.bin, c)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bigvalues: %s, %s: %v\n", s.name, c.name, err)
				os.Exit(1)
			}
			fmt.Println(row)
		}
	}
}

// bigCase builds a value, then runs n commands on it.
type bigCase struct {
	name  string
	build func(ctx context.Context, c *redis.Client) error
	cmd   []any
	n     int
}

var cases = []bigCase{
	{"APPEND 10 B to a 50 MB string", func(ctx context.Context, c *redis.Client) error {
		return c.Set(ctx, "s", strings.Repeat("x", 50<<20), 0).Err()
	}, []any{"APPEND", "s", "0123456789"}, 50},
	{"HSET on a 100k-field hash", func(ctx context.Context, c *redis.Client) error {
		return fill(ctx, c, "HSET", "h", 100000, true)
	}, []any{"HSET", "h", "field", "0123456789"}, 200},
	{"LPUSH on a 20k-element list", func(ctx context.Context, c *redis.Client) error {
		return fill(ctx, c, "RPUSH", "l", 20000, false)
	}, []any{"LPUSH", "l", "0123456789"}, 2000},
	{"LPUSH on a 120k-element list", func(ctx context.Context, c *redis.Client) error {
		return fill(ctx, c, "RPUSH", "l", 120000, false)
	}, []any{"LPUSH", "l", "0123456789"}, 2000},
}

// fill adds n items to key with cmd, 1000 a command; pairs: as fields
// with values.
func fill(ctx context.Context, c *redis.Client, cmd, key string, n int, pairs bool) error {
	for i := 0; i < n; i += 1000 {
		args := []any{cmd, key}
		for j := i; j < min(n, i+1000); j++ {
			args = append(args, "item:"+strconv.Itoa(j))
			if pairs {
				args = append(args, "value:"+strconv.Itoa(j))
			}
		}
		if err := c.Do(ctx, args...).Err(); err != nil {
			return err
		}
	}
	return nil
}

func measure(name, bin string, bc bigCase) (string, error) {
	dir, err := os.MkdirTemp("", "bigvalues-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	port, err := serverproc.FreePort()
	if err != nil {
		return "", err
	}
	args := []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "everysec"}
	if name == "redis" {
		args = append(args, "--save", "", "--daemonize", "no")
	}
	p, err := serverproc.Start(bin, args, dir, true)
	if err != nil {
		return "", err
	}
	defer p.Stop()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer c.Close()
	if err := p.WaitReady(addr, 30*time.Second, func(string) error { return c.Ping(ctx).Err() }); err != nil {
		return "", err
	}
	if err := bc.build(ctx, c); err != nil {
		return "", err
	}
	// A checkpoint the build started makes SAVE wait its turn.
	for err := c.Save(ctx).Err(); err != nil; err = c.Save(ctx).Err() {
		if !strings.Contains(err.Error(), "in progress") {
			return "", err
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	before, err := writeBytes(p.Pid())
	if err != nil {
		return "", err
	}
	start := time.Now()
	for range bc.n {
		if err := c.Do(ctx, bc.cmd...).Err(); err != nil {
			return "", err
		}
	}
	elapsed := time.Since(start)
	time.Sleep(2 * time.Second)
	after, err := writeBytes(p.Pid())
	if err != nil {
		return "", err
	}
	w := after - before
	return fmt.Sprintf("| %s | %s | %d | %d | %d | %.0f |", name, bc.name, bc.n, w, w/int64(bc.n),
		float64(bc.n)/elapsed.Seconds()), nil
}

// writeBytes is write_bytes of /proc/pid/io.
func writeBytes(pid int) (int64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "io"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no write_bytes in /proc/%d/io", pid)
}
