"""A redis-py session (Debian's python3-redis, RESP2) as services and
operators use it: W1 in pipeline(transaction=True), W2 by register_script
(EVALSHA, SCRIPT LOAD on NOSCRIPT), W3, W4 by execute_command('CL.THROTTLE'),
a WATCH transaction, and the W8 operator calls. Prints a JSON transcript for
redispy_test.go: {"lines": [...], "throttle": [...]}.

Usage: python3 redis_py_session.py host port [feature,feature...]
"""
import json
import os
import sys
import time

import redis

host, port = sys.argv[1], int(sys.argv[2])
features = set(filter(None, (sys.argv[3] if len(sys.argv) > 3 else "").split(",")))
here = os.path.dirname(os.path.abspath(__file__))


def lua(name):
    with open(os.path.join(here, "..", "testdata", name)) as f:
        return f.read()


lines, throttle = [], []


def rec(label, fn, out=lines):
    """Call fn and record its value, or its exception's class and text."""
    try:
        v = fn()
    except redis.RedisError as e:
        v = ("error", type(e).__name__, str(e))
    out.append("%s -> %r" % (label, v))
    return v


r = redis.Redis(host=host, port=port, socket_timeout=10)

# W8: what an operator does with a limiter's keys.
rec("ping", r.ping)
rec("info server version", lambda: r.info("server")["redis_version"])
rec("info server mode", lambda: r.info("server")["redis_mode"])
rec("set", lambda: r.set("limit:u1:login", 5, ex=100))
time.sleep(0.005)  # TTL rounds: a server that truncates answers 99
rec("ttl", lambda: r.ttl("limit:u1:login"))
rec("get", lambda: r.get("limit:u1:login"))
rec("incr", lambda: r.incr("limit:u1:login"))
rec("dbsize", r.dbsize)
rec("scan_iter", lambda: sorted(r.scan_iter(match="limit:*", count=100)))
rec("delete (reset a user)", lambda: r.delete("limit:u1:login", "nope"))
rec("exists", lambda: r.exists("limit:u1:login"))
rec("config_get", lambda: r.config_get("maxclients"))
rec("client_setname", lambda: r.client_setname("py-1"))
rec("client_getname", r.client_getname)
rec("wrong type", lambda: (r.hset("h", "f", "v"), r.get("h")))
rec("unknown command", lambda: r.execute_command("NOSUCH", "x"))


def monitor():
    """MONITOR while another client works: the commands it streams, without
    their times and client addresses."""
    with r.monitor() as m:
        spoiler_cmds = redis.Redis(host=host, port=port, socket_timeout=10)
        spoiler_cmds.set("mon", 1)
        spoiler_cmds.incr("mon")
        spoiler_cmds.delete("mon")
        return [(c["db"], c["command"]) for c in (m.next_command() for _ in range(3))]


rec("monitor", monitor)
rec("slowlog_reset", r.slowlog_reset)
rec("slowlog_len", r.slowlog_len)
rec("slowlog_get", lambda: r.slowlog_get(0))
rec("config_get slowlog (Redis orders a pattern's matches by its hash table)", lambda: sorted(r.config_get("slowlog-*").items()))
other_db = redis.Redis(host=host, port=port, db=2, socket_timeout=10)
rec("db=2 set", lambda: other_db.set("in2", "x"))
rec("db=2 dbsize", other_db.dbsize)
rec("db=0 dbsize", r.dbsize)

# W3: the fixed window in MULTI/EXEC.
for i in range(3):
    def w3():
        p = r.pipeline(transaction=True)
        p.incr("rl:u:1700000000")
        p.expire("rl:u:1700000000", 60, nx=True)
        return p.execute()
    rec("W3", w3)
rec("W3 ttl", lambda: r.ttl("rl:u:1700000000"))


# An optimistic transaction: another client writes between WATCH and EXEC
# on the first try, so redis-py's transaction() helper retries.
spoiler = redis.Redis(host=host, port=port, socket_timeout=10)
r.set("balance", 100)
tries = []


def spend(pipe):
    n = int(pipe.get("balance"))
    tries.append(n)
    if len(tries) == 1:
        spoiler.decrby("balance", 30)
    pipe.multi()
    pipe.set("balance", n - 10)


rec("transaction()", lambda: r.transaction(spend, "balance"))
rec("balances read per try", lambda: tries)
rec("balance", lambda: r.get("balance"))

# W1: the sliding-window log in pipeline(transaction=True).
if "zset" in features:
    base = 1700000000000
    for off in [0, 100, 100, 200, 300, 1150]:
        now = base + off

        def w1(now=now):
            p = r.pipeline(transaction=True)
            p.zadd("limit:u:a", {str(now): now})
            p.zremrangebyscore("limit:u:a", 0, now - 1000)
            p.zcard("limit:u:a")
            p.expire("limit:u:a", 2)
            return p.execute()
        rec("W1 at +%d" % off, w1)
    rec("W1 zrange", lambda: r.zrange("limit:u:a", 0, -1, withscores=True))

# W7 by register_script: EVALSHA, SCRIPT LOAD on NOSCRIPT, and in a
# transaction pipeline (which loads its scripts first).
if "eval" in features:
    funnel = r.register_script(lua("w7_funnel.lua"))
    base = 1700000000000
    rec("W7", lambda: funnel(keys=["funnel:py"], args=[5, 1, base, 2, 60]))
    rec("W7", lambda: funnel(keys=["funnel:py"], args=[5, 1, base + 700, 2, 60]))
    rec("script_flush", r.script_flush)
    rec("W7 after SCRIPT FLUSH", lambda: funnel(keys=["funnel:py"], args=[5, 1, base + 1400, 2, 60]))
    rec("script_flush", r.script_flush)

    def w7_pipe():
        p = r.pipeline(transaction=True)
        funnel(keys=["funnel:py"], args=[5, 1, base + 2100, 1, 60], client=p)
        funnel(keys=["funnel:py"], args=[5, 1, base + 2800, 1, 60], client=p)
        p.hgetall("funnel:py")
        return p.execute()
    rec("W7 in a pipeline", w7_pipe)
    rec("eval error", lambda: r.eval("return redis.call('INCR', KEYS[1])", 1, "funnel:py"))

# W2: register_script, called directly and in a pipeline.
if "eval" in features and "zset" in features:
    window = r.register_script(lua("w2_window.lua"))
    base = 1700000000000
    for i in range(3):
        now = base + i * 100
        rec("W2", lambda now=now: window(keys=["limit:u:w2"], args=[now, now - 1000, 2]))
    rec("script_flush", r.script_flush)
    rec("W2 after SCRIPT FLUSH", lambda: window(keys=["limit:u:w2"], args=[base + 400, base - 600, 2]))
    rec("script_flush", r.script_flush)

    def w2_pipe():
        p = r.pipeline(transaction=True)
        window(keys=["limit:u:w2"], args=[base + 500, base - 500, 2], client=p)
        window(keys=["limit:u:w2"], args=[base + 600, base - 400, 2], client=p)
        p.zcard("limit:u:w2")
        return p.execute()
    rec("W2 in a pipeline", w2_pipe)
    rec("eval", lambda: r.eval("return {1, 'two', 3.7, false, {ARGV[1]}}", 0, "x"))
    rec("eval error", lambda: r.eval("return redis.call('INCR', KEYS[1])", 1, "limit:u:w2"))

# W4: CL.THROTTLE, checked against redis-cell's vectors by the Go test.
rec("user123 first", lambda: r.execute_command("CL.THROTTLE", "user123", 15, 30, 60), throttle)
rec("user123 second", lambda: r.execute_command("CL.THROTTLE", "user123", 15, 30, 60), throttle)


def t3():
    p = r.pipeline(transaction=False)
    for _ in range(4):
        p.execute_command("CL.THROTTLE", "t3", 2, 3, 1)
    return p.execute(raise_on_error=False)


rec("t3 pipeline", t3, throttle)
rec("bad argument", lambda: r.execute_command("CL.THROTTLE", "k", "x", 1, 1), throttle)

rec("flushall", r.flushall)
rec("dbsize", r.dbsize)
print(json.dumps({"lines": lines, "throttle": throttle}))
