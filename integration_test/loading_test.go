package integration_test

import (
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// startLoading starts cellserver on dataDir and returns as soon as it
// answers, -LOADING included (the harness's start waits for the load).
func startLoading(t *testing.T, dataDir string, args ...string) *process {
	t.Helper()
	port, err := serverproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dataDir}, args...)
	sp, err := serverproc.Start(cellserverBinary(t), args, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	p := &process{Proc: sp, name: "cellserver", addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	t.Cleanup(p.Stop)
	if err := p.WaitReady(p.addr, startTimeout, func(addr string) error { _, err := answerRESP(addr); return err }); err != nil {
		t.Fatalf("%v\n%s", err, p.LogTail(20))
	}
	return p
}

// TestLoadingWithBuiltBinary: the built binary listens before it loads
// its store. A port in use is reported before loading (exit 1, nothing
// loaded); while it loads, PING and data commands get -LOADING, INFO
// persistence shows loading:1 with its progress and the log says how far
// it is; then every key is served, and the closing log line counts them
// as DBSIZE does. CELLSERVER_TEST_SLOW_LOAD slows the load down.
func TestLoadingWithBuiltBinary(t *testing.T) {
	bin := cellserverBinary(t)
	dir := t.TempDir()
	const keys = 20000
	p := cellOnDir(t, dir)
	c := mustDial(t, p)
	for i := range keys {
		c.Send("SET", "k"+strconv.Itoa(i), "v")
	}
	for range keys {
		if _, err := c.ReadReply(); err != nil {
			t.Fatal(err)
		}
	}
	mustDo(t, c, "SAVE")
	for i := range 500 { // in the log only: replayed at the next start
		mustDo(t, c, "SET", "late"+strconv.Itoa(i), "v")
	}
	p.kill()                                       // no final save: the next start replays the log
	t.Setenv("CELLSERVER_TEST_SLOW_LOAD", "150ms") // per 1000 keys: 3 s

	// A port in use: reported at once, before loading.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--dir", dir)
	started := time.Now()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "address already in use") ||
		strings.Contains(string(out), "persistence: loading") {
		t.Errorf("on a port in use: %v after %v\n%s", err, time.Since(started), out)
	}

	// While it loads.
	p2 := startLoading(t, dir)
	c2 := mustDial(t, p2)
	for _, args := range [][]string{{"PING"}, {"GET", "k1"}, {"DBSIZE"}} {
		if r := mustDo(t, c2, args...); r != "-LOADING Redis is loading the dataset in memory\r\n" {
			t.Errorf("%v while loading: %q", args, r)
		}
	}
	info := infoFields(mustDo(t, c2, "INFO", "persistence"))
	for _, f := range []string{"loading_start_time", "loading_total_bytes", "loading_rdb_used_mem",
		"loading_loaded_bytes", "loading_loaded_perc", "loading_eta_seconds"} {
		if _, ok := info[f]; !ok {
			t.Errorf("INFO persistence while loading lacks %s", f)
		}
	}
	if info["loading"] != "1" {
		t.Errorf("INFO persistence while loading: loading:%s", info["loading"])
	}
	deadline := time.Now().Add(60 * time.Second)
	for mustDo(t, c2, "PING") != "+PONG\r\n" {
		if time.Now().After(deadline) {
			t.Fatalf("still loading after a minute:\n%s", p2.LogTail(20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := keys + 500
	if r := mustDo(t, c2, "DBSIZE"); r != ":"+strconv.Itoa(want)+"\r\n" {
		t.Errorf("DBSIZE after loading: %q", r)
	}
	log := p2.LogTail(40)
	if !regexp.MustCompile(`msg="persistence: loading" loaded_bytes=\d+ total_bytes=\d+ perc=\d+\.\d\d eta_seconds=\d+`).MatchString(log) {
		t.Errorf("no progress line in the log:\n%s", log)
	}
	if !strings.Contains(log, `msg="persistence: loaded" dir=`+filepath.Clean(dir)) ||
		!strings.Contains(log, " keys="+strconv.Itoa(want)+" snapshot_keys="+strconv.Itoa(keys)+" ") {
		t.Errorf("the closing load line does not count %d keys:\n%s", want, log)
	}
}
