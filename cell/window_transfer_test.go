package cell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/rdb"
)

// windowState is what CL.WINDOW (cost 0: nothing recorded) and the key's
// expiry answer for each key at ms.
func windowState(srv *Server, c *testConn, ms int64, keys ...string) string {
	var out []string
	for _, k := range keys {
		out = append(out, windowAt(srv, c, ms, k, "10", "60000", "0"), c.do("pexpiretime", k), c.do("type", k))
	}
	return strings.Join(out, "|")
}

// TestWindowDumpRestoreCopy: a CL.WINDOW key DUMPed and RESTOREd (with
// its expiry, ABSTTL) or COPYed answers CL.WINDOW as the original does,
// now and after further calls.
func TestWindowDumpRestoreCopy(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	t0 := time.Now().UnixMilli()
	for i := int64(0); i < 6; i++ {
		windowAt(srv, c, t0+i*10, "w", "10", "60000", "1")
	}
	windowAt(srv, c, t0+70, "w", "10", "60000", "3")
	dump := c.do("dump", "w")
	if !strings.HasPrefix(dump, "$") {
		t.Fatalf("DUMP w: %q", dump)
	}
	payload := dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
	v, err := rdb.DecodeDump([]byte(payload))
	if err != nil || v.Type != rdb.TypeModule || v.Module != windowModule {
		t.Fatalf("DUMP payload: %+v %v, want a %s module value", v, err, windowModule)
	}
	exp := strings.TrimSuffix(strings.TrimPrefix(c.do("pexpiretime", "w"), ":"), "\r\n")
	for _, tc := range [][2]string{
		{"restore r " + exp + " P ABSTTL", "+OK\r\n"},
		{"restore r 0 P", "-" + ErrBusyKey + "\r\n"},
		{"copy w cp", ":1\r\n"},
	} {
		args := strings.Fields(tc[0])
		for i, a := range args {
			if a == "P" {
				args[i] = payload
			}
		}
		if got := c.do(args...); got != tc[1] {
			t.Errorf("%s: %q, want %q", tc[0], got, tc[1])
		}
	}
	for _, at := range []int64{t0 + 80, t0 + 60010, t0 + 60050} {
		want := windowState(srv, c, at, "w")
		for _, k := range []string{"r", "cp"} {
			if got := windowState(srv, c, at, k); got != want {
				t.Errorf("at +%d %s: %q, want w's %q", at-t0, k, got, want)
			}
		}
		for _, k := range []string{"w", "r", "cp"} {
			windowAt(srv, c, at, k, "10", "60000", "2")
		}
	}
	// Restored without a TTL: the window, and no expiry.
	if got := c.do("restore", "nottl", "0", payload); got != "+OK\r\n" {
		t.Fatalf("RESTORE ttl 0: %q", got)
	}
	if got := c.do("pttl", "nottl"); got != ":-1\r\n" {
		t.Errorf("PTTL nottl = %q, want -1", got)
	}
}

// TestWindowRestoreRefused: forged window payloads get RESTORE's exact
// errors and leave the key as it was.
func TestWindowRestoreRefused(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("set", "k", "v")
	payload := func(module string, ver int, items ...rdb.ModuleItem) string {
		p, err := rdb.EncodeDump(&rdb.Value{Type: rdb.TypeModule, Module: module, ModuleVersion: ver, ModuleData: items})
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	str := func(b ...byte) rdb.ModuleItem { return rdb.ModuleItem{Kind: rdb.ModuleString, Str: b} }
	good := payload(windowModule, 0, str(0x80, 0x01, 3))
	bad := []byte(good)
	bad[4] ^= 0x10
	for _, tc := range []struct {
		name, p, want string
	}{
		{"checksum", string(bad), ErrDumpPayload},
		{"empty window", payload(windowModule, 0, str()), ErrBadDataFormat},
		{"count 0", payload(windowModule, 0, str(5, 0)), ErrBadDataFormat},
		{"half a run", payload(windowModule, 0, str(5)), ErrBadDataFormat},
		{"trailing byte", payload(windowModule, 0, str(5, 1, 0x80)), ErrBadDataFormat},
		{"time overflow", payload(windowModule, 0, str(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1)), ErrBadDataFormat},
		{"newer version", payload(windowModule, 1, str(5, 1)), ErrBadDataFormat},
		{"other module", payload("ReJSON-RL", 3, str(5, 1)), ErrBadDataFormat},
		{"two items", payload(windowModule, 0, str(5, 1), str(5, 1)), ErrBadDataFormat},
		{"not a string", payload(windowModule, 0, rdb.ModuleItem{Kind: rdb.ModuleUInt, Int: 5}), ErrBadDataFormat},
	} {
		if got := c.do("restore", "k", "0", tc.p, "replace"); got != "-"+tc.want+"\r\n" {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := c.do("get", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("k after refused RESTOREs: %q", got)
	}
}

// TestWindowSaveLoad: SAVE writes windows into dump.rdb, and a server
// started on that file alone holds them, with their expiry.
func TestWindowSaveLoad(t *testing.T) {
	srv, stop1 := openServer(t, t.TempDir(), nil)
	defer stop1()
	c := dial(t, srv)
	t0 := time.Now().UnixMilli()
	for i := int64(0); i < 4; i++ {
		windowAt(srv, c, t0+i, "a", "10", "60000", "2")
		windowAt(srv, c, t0+i, "b", "10", "60000")
	}
	c.do("set", "s", "1")
	want := windowState(srv, c, t0+10, "a", "b")
	if got := c.do("save"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	if got := readRDB(t, srv.rdbPath()); got["0/a"] != "module: ttl" || got["0/b"] != "module: ttl" {
		t.Errorf("dump.rdb holds %v, want windows a and b", got)
	}
	dir := t.TempDir()
	file, err := os.ReadFile(srv.rdbPath())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644)
	srv2, stop := openServer(t, dir, nil)
	defer stop()
	c2 := dial(t, srv2)
	if got := windowState(srv2, c2, t0+10, "a", "b"); got != want {
		t.Errorf("loaded from dump.rdb: %q, want %q", got, want)
	}
}
