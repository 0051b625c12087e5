"""redis-py's pubsub() as applications use it (Debian's python3-redis,
RESP2): subscribe and psubscribe with their confirmations, get_message,
a handler run by run_in_thread, ping on the subscribed connection,
PUBSUB introspection, unsubscribe and close. Prints {"lines": [...]} for
redispy_test.go.

Usage: python3 redis_py_pubsub.py host port
"""
import json
import sys
import threading

import redis

host, port = sys.argv[1], int(sys.argv[2])
lines = []


def rec(label, fn):
    try:
        v = fn()
    except redis.RedisError as e:
        v = ("error", type(e).__name__, str(e))
    lines.append("%s -> %r" % (label, v))
    return v


r = redis.Redis(host=host, port=port, socket_timeout=10)
p = r.pubsub()
rec("subscribe", lambda: p.subscribe("py:news", "py:sport"))
rec("confirm 1", lambda: p.get_message(timeout=5))
rec("confirm 2", lambda: p.get_message(timeout=5))
rec("psubscribe", lambda: p.psubscribe("py:n*"))
rec("confirm 3", lambda: p.get_message(timeout=5))
rec("publish", lambda: r.publish("py:news", "hello"))
rec("message", lambda: p.get_message(timeout=5))
rec("pmessage", lambda: p.get_message(timeout=5))
rec("nothing more", lambda: p.get_message(timeout=0.2))
rec("ping", lambda: p.ping("x"))
rec("pong", lambda: p.get_message(timeout=5))
rec("numsub", lambda: r.pubsub_numsub("py:news", "py:none"))
rec("numpat", r.pubsub_numpat)
rec("channels", lambda: sorted(r.pubsub_channels("py:*")))
rec("unsubscribe", lambda: p.unsubscribe("py:news"))
rec("unsubscribed", lambda: p.get_message(timeout=5))
rec("punsubscribe", lambda: p.punsubscribe())
rec("punsubscribed", lambda: p.get_message(timeout=5))

got = []
done = threading.Event()


def handler(m):
    got.append(m)
    done.set()


p2 = r.pubsub()
p2.subscribe(**{"py:events": handler})
t = p2.run_in_thread(sleep_time=0.01)
for _ in range(500):
    if r.pubsub_numsub("py:events")[0][1] == 1:
        break
    done.wait(0.01)
rec("publish to handler", lambda: r.publish("py:events", "e1"))
done.wait(5)
rec("handler got", lambda: got)
t.stop()
t.join(5)
p2.close()
p.close()
print(json.dumps({"lines": lines, "throttle": []}))
