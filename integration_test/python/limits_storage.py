"""python-limits' redis storage (Debian's python3-limits, the storage
behind Flask-Limiter) as applications use it: its Lua scripts (incr with
expiry, moving window, reset's KEYS-and-DEL script, which touches keys it
does not declare), the fixed, elastic and moving window strategies, and
clear. Prints {"lines": [...]} for limits_test.go; nothing that depends on
the clock is printed.

Usage: python3 limits_storage.py host port
"""
import json
import sys
import time

import redis
from limits import RateLimitItemPerMinute, storage, strategies

host, port = sys.argv[1], int(sys.argv[2])
lines = []


def rec(label, fn):
    try:
        v = fn()
    except redis.RedisError as e:
        v = ("error", type(e).__name__, str(e))
    lines.append("%s -> %r" % (label, v))
    return v


s = storage.RedisStorage("redis://%s:%d" % (host, port))
rec("check", s.check)
rec("incr", lambda: s.incr("LIMITER/a", 60))
rec("incr amount", lambda: s.incr("LIMITER/a", 60, amount=2))
rec("incr elastic", lambda: s.incr("LIMITER/e", 60, elastic_expiry=True))
rec("incr elastic again", lambda: s.incr("LIMITER/e", 60, elastic_expiry=True))
rec("get", lambda: s.get("LIMITER/a"))
rec("get missing", lambda: s.get("LIMITER/none"))
rec("expiry ahead", lambda: 0 < s.get_expiry("LIMITER/a") - time.time() <= 61)
rec("acquire", lambda: [s.acquire_entry("LIMITER/mw", 2, 60) for _ in range(3)])
rec("moving window count", lambda: s.get_moving_window("LIMITER/mw", 2, 60)[1])

item = RateLimitItemPerMinute(3)
for name, cls in [
    ("fixed", strategies.FixedWindowRateLimiter),
    ("elastic", strategies.FixedWindowElasticExpiryRateLimiter),
    ("moving", strategies.MovingWindowRateLimiter),
]:
    lim = cls(s)
    rec(name + " hits", lambda: [lim.hit(item, "user", str(i % 2)) for i in range(8)])
    rec(name + " test", lambda: [lim.test(item, "user", "0"), lim.test(item, "user", "9")])
    rec(name + " remaining", lambda: lim.get_window_stats(item, "user", "1")[1])
    rec(name + " clear", lambda: lim.clear(item, "user", "0"))
    rec(name + " after clear", lambda: lim.hit(item, "user", "0"))

# Keys on many shards, and keys reset must leave alone.
for i in range(40):
    s.incr("LIMITER/many/%d" % i, 60)
s.storage.set("other", "kept")
s.storage.set("LIMITE", "kept too")
rec("reset", s.reset)
rec("reset again", s.reset)
rec("after reset", lambda: [s.get("LIMITER/a"), s.get("LIMITER/many/7"), s.get_moving_window("LIMITER/mw", 2, 60)[1]])
rec("others kept", lambda: [s.storage.get("other"), s.storage.get("LIMITE")])
rec("incr after reset", lambda: s.incr("LIMITER/a", 60))
s.clear("LIMITER/a")
rec("cleared", lambda: s.get("LIMITER/a"))
rec("reset last", s.reset)

print(json.dumps({"lines": lines}))
