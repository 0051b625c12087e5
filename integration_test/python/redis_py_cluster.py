"""The rate-limiting workloads through redis-py (Debian's python3-redis), as
one service runs them against one server (mode "single": redis.Redis) or
against a cluster (mode "cluster": RedisCluster, which routes each key by
its slot and follows MOVED). The same session as
../node/ioredis_cluster.js: 30 users, each making 3 to 7 requests, W1-W4
and W8, decisions recorded per user. redispy_cluster_test.go requires the
two modes to print the same transcript.

redis-py 4.3 refuses pipeline(transaction=True) on a RedisCluster, so W1
and W3 run their MULTI/EXEC on the key's node, found by get_node_from_key:
what redis-py's documentation tells cluster users to do.

Usage: python3 redis_py_cluster.py host port single|cluster
"""
import json
import os
import re
import sys

import redis
from redis.cluster import RedisCluster

host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cluster = mode == "cluster"
here = os.path.dirname(os.path.abspath(__file__))
USERS, BASE = 30, 1700000000000

if cluster:
    r = RedisCluster(host=host, port=port, socket_timeout=10)
else:
    r = redis.Redis(host=host, port=port, socket_timeout=10)

lines = []


def note(label, v):
    lines.append("%s -> %r" % (label, v))


def requests(u):
    return 3 + u % 5


def decide(n, limit):
    return "allow" if n <= limit else "deny:%d" % n


def tx(key):
    """A MULTI/EXEC pipeline on the node that serves key."""
    if cluster:
        return r.get_redis_connection(r.get_node_from_key(key)).pipeline(transaction=True)
    return r.pipeline(transaction=True)


def on(nodes):
    """Arguments sending a key-less command to the given RedisCluster nodes
    (RANDOM, PRIMARIES): redis-py 4.3 sends INFO and CONFIG GET to every
    node and DBSIZE to its default node unless told."""
    return {"target_nodes": nodes} if cluster else {}


# W8: connection checks an operator makes.
note("ping", r.ping())
note("info server version", r.info("server", **on(RedisCluster.RANDOM))["redis_version"])
note("config_get maxclients", r.config_get("maxclients", **on(RedisCluster.RANDOM)))

# W1: the sliding-window log in MULTI/EXEC.
for u in range(USERS):
    key = "limit:u%d:login" % u
    decisions = []
    for i in range(requests(u)):
        now = BASE + i * 250 - (250 if i == 2 else 0)
        p = tx(key)
        p.zadd(key, {str(now): now})
        p.zremrangebyscore(key, 0, now - 1000)
        p.zcard(key)
        p.expire(key, 60)
        decisions.append(decide(p.execute()[2], 3))
    note("W1 " + key, decisions)

# W2: register_script (EVALSHA, SCRIPT LOAD on NOSCRIPT).
with open(os.path.join(here, "..", "testdata", "w2_window.lua")) as f:
    window = r.register_script(f.read())
for u in range(USERS):
    key = "limit:u%d:w2" % u
    decisions = []
    for i in range(requests(u)):
        now = BASE + i * 300
        decisions.append(decide(window(keys=[key], args=[now, now - 1000, 60]), 3))
    note("W2 " + key, decisions)

# W3: INCR and EXPIRE NX in MULTI/EXEC.
for u in range(USERS):
    key = "rl:u%d:1700000000" % u
    decisions = []
    for i in range(requests(u)):
        p = tx(key)
        p.incr(key)
        p.expire(key, 60, nx=True)
        decisions.append(decide(p.execute()[0], 4))
    ttl = r.ttl(key)
    note("W3 " + key, (decisions, 59 <= ttl <= 60))

# W4: CL.THROTTLE, burst 3, 10 per minute; the first three fields.
for u in range(USERS):
    key = "throttle:{tenant%d}:api" % u
    note("W4 " + key, [r.execute_command("CL.THROTTLE", key, 3, 10, 60)[:3] for _ in range(requests(u))])

# A pipeline of keys in one slot (a tenant's hash tag).
p = r.pipeline()
p.set("{tenant3}:a", 1)
p.incr("{tenant3}:a")
p.get("{tenant3}:a")
p.delete("{tenant3}:a")
note("pipeline in one slot", p.execute())

# W8: count, list, look at a throttle key, reset a user.
note("dbsize over the primaries", r.dbsize(**on(RedisCluster.PRIMARIES)))
note("scan_iter limit:*", sorted(r.scan_iter(match="limit:*", count=100)))
tk = "throttle:{tenant7}:api"
note("get a throttle key is a TAT in ns", re.fullmatch(rb"[0-9]{19}", r.get(tk)) is not None)
note("pttl of a throttle key is set", 0 < r.pttl(tk) <= 60000)
note("delete (reset a user)", r.delete(tk))
note("exists after delete", r.exists(tk))
note("CL.THROTTLE after the reset", r.execute_command("CL.THROTTLE", tk, 3, 10, 60)[:3])
note("type of a window", r.type("limit:u3:login"))
note("zcard of a window", r.zcard("limit:u3:login"))
print(json.dumps({"lines": lines, "throttle": []}))
