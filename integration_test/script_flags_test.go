package integration_test

import (
	"crypto/sha1"
	"fmt"
	"testing"
)

// Script flags (#!lua flags=..., register_function's flags) as Redis 7.0
// honours them: allow-oom under maxmemory, no-cluster and
// allow-cross-slot-keys in cluster mode, the shebang's syntax. allow-stale
// and no-writes on a replica: repl_limits_test.go.

// oomLib's functions: one that writes, one no-writes, one allow-oom that
// writes, one allow-oom and no-writes.
const oomLib = `#!lua name=oom
redis.register_function('oom_w', function() return redis.call('SET', 'a', 3) end)
redis.register_function{function_name='oom_ro', callback=function() return redis.call('GET', 'a') end, flags={'no-writes'}}
redis.register_function{function_name='oom_ok', callback=function() return redis.call('SET', 'a', 4) end, flags={'allow-oom'}}
redis.register_function{function_name='oom_okro', callback=function() return redis.call('GET', 'a') end, flags={'allow-oom', 'no-writes'}}`

// TestScriptFlagsOOM: over maxmemory, a script with a shebang is refused
// unless no-writes or allow-oom; one without runs, but its first
// deny-oom command is refused, unless it wrote already.
func TestScriptFlagsOOM(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		c.Do("FUNCTION", "LOAD", oomLib)
		c.Do("SET", "a", "1")
		c.Do("CONFIG", "SET", "maxmemory", "1")
		c.Do("EVAL", "return 1", "0")
		c.Error("EVAL", "return redis.call('SET', 'a', 1)", "0")
		c.Do("EVAL", "return redis.pcall('SET', 'a', 1)", "0")
		c.Do("EVAL", "return redis.call('GET', 'a')", "0")
		c.Do("EVAL", "return redis.call('DEL', 'nosuch')", "0") // not deny-oom
		c.Do("EVAL", "redis.call('DEL', 'nosuch') return redis.pcall('SET', 'a', 5)", "0")
		c.Error("EVAL", "#!lua\nreturn 1", "0")
		c.Do("EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', 'a')", "0")
		c.Do("EVAL", "#!lua flags=allow-oom\nreturn redis.call('SET', 'a', 2)", "0")
		c.Do("EVAL", "#!lua flags=allow-oom,no-writes\nreturn redis.call('GET', 'a')", "0")
		c.Do("EVAL_RO", "return 1", "0")
		c.Do("EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0")
		c.Error("FCALL", "oom_w", "0")
		c.Do("FCALL", "oom_ro", "0")
		c.Do("FCALL", "oom_ok", "0")
		c.Do("FCALL", "oom_okro", "0")
		c.Do("FCALL_RO", "oom_ro", "0")
		c.Error("FCALL_RO", "oom_ok", "0")
		c.Error("FCALL", "nosuch", "0")
		incr := "#!lua flags=allow-oom\nreturn redis.call('INCR', 'n')"
		c.Do("SCRIPT", "LOAD", incr)
		c.Do("EVALSHA", fmt.Sprintf("%x", sha1.Sum([]byte(incr))), "0")
		noShebang := "return redis.call('INCR', 'n')"
		c.Do("SCRIPT", "LOAD", noShebang)
		c.Error("EVALSHA", fmt.Sprintf("%x", sha1.Sum([]byte(noShebang))), "0")
		// In MULTI everything is refused while over the limit.
		c.Do("MULTI")
		c.Error("EVAL", "#!lua flags=no-writes\nreturn 1", "0")
		c.Error("EXEC")
		c.Do("CONFIG", "SET", "maxmemory", "0")
		c.Do("EVAL", "#!lua\nreturn redis.call('SET', 'a', 6)", "0")
		c.Do("GET", "a")
	})
}

// TestScriptFlagsCluster: in cluster mode a no-cluster script or function
// is refused, and one with a shebang may not reach keys of two slots
// unless allow-cross-slot-keys; one without may.
func TestScriptFlagsCluster(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{args: []string{"--cluster-enabled", "yes"}}, func(t *testing.T, c *pair) {
		c.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
		c.Do("FUNCTION", "LOAD", `#!lua name=cl
redis.register_function{function_name='cl_no', callback=function() return 1 end, flags={'no-cluster'}}
redis.register_function('cl_cross', function() redis.call('SET', 'foo', 1) return redis.call('SET', 'bar', 2) end)
redis.register_function{function_name='cl_crossok', callback=function() redis.call('SET', 'foo', 1) return redis.call('SET', 'bar', 2) end, flags={'allow-cross-slot-keys'}}`)
		c.Error("EVAL", "#!lua flags=no-cluster\nreturn 1", "0")
		c.Error("EVAL", "#!lua flags=no-writes,no-cluster\nreturn 1", "0")
		c.Do("EVAL", "#!lua\nreturn 1", "0")
		c.Do("EVAL", "return 1", "0")
		c.Error("FCALL", "cl_no", "0")
		c.Error("FCALL", "cl_cross", "0")
		c.Do("FCALL", "cl_crossok", "0")
		c.Error("EVAL", "#!lua\nredis.call('SET', 'foo', 1) return redis.call('SET', 'bar', 2)", "0")
		c.Do("EVAL", "#!lua flags=allow-cross-slot-keys\nredis.call('SET', 'foo', 1) return redis.call('SET', 'bar', 2)", "0")
		c.Do("EVAL", "redis.call('SET', 'foo', 3) return redis.call('SET', 'bar', 4)", "0")
		c.Do("GET", "{foo}")
	})
}

// TestScriptShebangSyntax: the shebang line's forms and their errors.
func TestScriptShebangSyntax(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, body := range []string{
			"#!lua flags=no-writes,bogus\nreturn 1",
			"#!lua flags=no-writes flags=allow-oom\nreturn 1",
			"#!lua  flags=no-writes\nreturn 1",
			"#!lua flags=no-writes \nreturn 1",
			"#!lua \"flags=no-writes\"\nreturn 1",
			"#!lua flags=no-writes,,allow-oom\nreturn 1",
			"#!lua flags=,\nreturn 1",
			"#!lua \"unbalanced\nreturn 1",
			"#!LUA\nreturn 1",
			"#!\nreturn 1",
			"#! lua\nreturn 1",
			"#!lua\r\nreturn 1",
			"#!lua flags=NO-WRITES\nreturn 1",
			"#!lua name=x flags=no-writes\nreturn 1",
			"#!lua flags=no-writes name=x\nreturn 1",
			"  #!lua\nreturn 1",
			"#!lua flags=no-writes",
		} {
			c.Do("EVAL", body, "0")
			c.Do("SCRIPT", "LOAD", body)
		}
	})
}
