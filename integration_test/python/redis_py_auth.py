"""redis-py's connection set-up against a server with requirepass s3cret:
AUTH, SELECT from db=, CLIENT SETNAME from client_name=, and the errors of
a wrong or missing password. Prints {"lines": [...]} for redispy_test.go.

Usage: python3 redis_py_auth.py host port
"""
import json
import sys

import redis

host, port = sys.argv[1], int(sys.argv[2])
lines = []


def rec(label, fn):
    try:
        v = fn()
    except redis.RedisError as e:
        v = ("error", type(e).__name__, str(e))
    lines.append("%s -> %r" % (label, v))


r = redis.Redis(host=host, port=port, password="s3cret", db=3, client_name="billing", socket_timeout=10)
rec("ping", r.ping)
rec("client_getname", r.client_getname)
rec("set in db 3", lambda: r.set("k", "v"))
rec("dbsize", r.dbsize)
rec("wrong password", redis.Redis(host=host, port=port, password="nope", socket_timeout=10).ping)
rec("no password", lambda: redis.Redis(host=host, port=port, socket_timeout=10).get("k"))
rec("username and password", redis.Redis(host=host, port=port, username="default", password="s3cret", socket_timeout=10).ping)
rec("flushdb", r.flushdb)
print(json.dumps({"lines": lines, "throttle": []}))
