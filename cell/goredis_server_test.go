package cell

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// go-redis v9 parses the server commands' replies into its own types; it
// must accept ours in RESP3 (its default) and RESP2.
func TestGoRedisServerCommands(t *testing.T) {
	srv := startServer(t, nil)
	for _, proto := range []int{3, 2} {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), Protocol: proto, ClientName: "gr"})
		ctx := context.Background()
		cmds, err := rdb.Command(ctx).Result()
		if err != nil {
			t.Fatalf("RESP%d COMMAND: %v", proto, err)
		}
		if ci := cmds["watch"]; ci == nil || ci.Arity != -2 || ci.FirstKeyPos != 1 || ci.LastKeyPos != -1 || ci.ReadOnly {
			t.Errorf("RESP%d COMMAND watch: %+v", proto, ci)
		}
		if ci := cmds["cl.throttle"]; ci == nil || ci.FirstKeyPos != 1 {
			t.Errorf("RESP%d COMMAND cl.throttle: %+v", proto, ci)
		}
		info, err := rdb.Info(ctx, "server", "clients").Result()
		if err != nil || !strings.Contains(info, "redis_version:7.0.15\r\n") || !strings.Contains(info, "# Clients\r\n") {
			t.Errorf("RESP%d INFO: %v %q", proto, err, info)
		}
		cfg, err := rdb.ConfigGet(ctx, "maxmemory*").Result()
		if err != nil || cfg["maxmemory-policy"] != "noeviction" || cfg["maxmemory"] != "0" {
			t.Errorf("RESP%d CONFIG GET: %v %v", proto, err, cfg)
		}
		if err := rdb.ConfigSet(ctx, "maxmemory", "1mb").Err(); err != nil {
			t.Errorf("RESP%d CONFIG SET: %v", proto, err)
		}
		if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
			t.Errorf("RESP%d CONFIG RESETSTAT: %v", proto, err)
		}
		list, err := rdb.ClientList(ctx).Result()
		if err != nil || !strings.Contains(list, " name=gr ") {
			t.Errorf("RESP%d CLIENT LIST: %v %q", proto, err, list)
		}
		if id, err := rdb.ClientID(ctx).Result(); err != nil || id <= 0 {
			t.Errorf("RESP%d CLIENT ID: %v %d", proto, err, id)
		}
		if name, err := rdb.ClientGetName(ctx).Result(); err != nil || name != "gr" {
			t.Errorf("RESP%d CLIENT GETNAME: %v %q", proto, err, name)
		}
		if ci, err := rdb.ClientInfo(ctx).Result(); err != nil || ci.Name != "gr" || ci.Resp != proto {
			t.Errorf("RESP%d CLIENT INFO: %v %+v", proto, err, ci)
		}
		if err := rdb.FunctionFlush(ctx).Err(); err != nil {
			t.Errorf("RESP%d FUNCTION FLUSH: %v", proto, err)
		}
		if libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{}).Result(); err != nil || len(libs) != 0 {
			t.Errorf("RESP%d FUNCTION LIST: %v %v", proto, err, libs)
		}
		rdb.ConfigSet(ctx, "maxmemory", "0")
		rdb.Close()
	}
}
