package cell

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestLoadingAnswersLoading: a server that listens while it loads answers
// PING and data commands with -LOADING, INFO persistence shows loading:1
// and Redis's loading_* fields, and once loaded it serves every key.
func TestLoadingAnswersLoading(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	const keys = 5000
	for i := range keys {
		c.do("SET", "k"+strconv.Itoa(i), "v")
	}
	c.do("SAVE")
	for i := range 100 {
		c.do("SET", "log"+strconv.Itoa(i), "v") // in the log, replayed
	}
	stop()

	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Shards = 8
	cfg.Dir = dir
	cfg.Logger = srv.log
	cfg.SlowLoad = 100 * time.Millisecond // per 1000 keys: half a second
	srv2, err := OpenStore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv2.mu.Lock()
	srv2.listeners = append(srv2.listeners, ln)
	srv2.mu.Unlock()
	go srv2.Serve()
	loaded := make(chan error, 1)
	go func() { loaded <- srv2.Load() }()
	t.Cleanup(func() {
		<-loaded
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv2.Shutdown(ctx)
	})
	c2 := dial(t, srv2)
	for _, cmd := range [][]string{{"PING"}, {"GET", "k1"}, {"DBSIZE"}, {"CL.THROTTLE", "x", "1", "1", "1"}} {
		if r := c2.do(cmd...); r != "-"+ErrLoading+"\r\n" {
			t.Errorf("%v while loading: %q", cmd, r)
		}
	}
	info := infoMap(c2.do("INFO", "persistence"))
	if info["loading"] != "1" {
		t.Fatalf("INFO persistence while loading: %v", info)
	}
	total, _ := strconv.ParseInt(info["loading_total_bytes"], 10, 64)
	start, _ := strconv.ParseInt(info["loading_start_time"], 10, 64)
	perc, _ := strconv.ParseFloat(info["loading_loaded_perc"], 64)
	if total <= 0 || time.Now().Unix()-start > 60 || perc < 0 || perc > 100 ||
		info["loading_eta_seconds"] == "" || info["loading_loaded_bytes"] == "" || info["loading_rdb_used_mem"] != "0" {
		t.Errorf("INFO persistence's loading fields: %v", info)
	}
	if r := c2.do("INFO", "keyspace"); r != "$12\r\n# Keyspace\r\n\r\n" {
		t.Errorf("INFO keyspace while loading: %q", r)
	}
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	loaded <- nil // for the cleanup
	if r := c2.do("PING"); r != "+PONG\r\n" {
		t.Errorf("PING after loading: %q", r)
	}
	if r := c2.do("DBSIZE"); r != ":"+strconv.Itoa(keys+100)+"\r\n" {
		t.Errorf("DBSIZE after loading: %q", r)
	}
	if info := infoMap(c2.do("INFO", "persistence")); info["loading"] != "0" || info["loading_total_bytes"] != "" {
		t.Errorf("INFO persistence after loading: loading=%q loading_total_bytes=%q", info["loading"], info["loading_total_bytes"])
	}
}
