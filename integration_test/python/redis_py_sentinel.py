"""redis-py's Sentinel client (Debian's python3-redis) writing through a
failover: master_for() asks the sentinels where the master is and asks
again when its connection fails or the server says READONLY. Each write
is SET py:<n> <n> then WAIT 1 500. Prints, as JSON, the keys a replica
acknowledged with when (Unix ms), how many writes and failed attempts
there were, and the longest gap between two successful writes (the
failover's pause). Runs until its stdin closes.

Usage: python3 redis_py_sentinel.py master-name host:port[,host:port...]
"""
import json
import sys
import threading
import time

import redis
from redis.sentinel import Sentinel

name = sys.argv[1]
addrs = [(h, int(p)) for h, p in (a.rsplit(":", 1) for a in sys.argv[2].split(","))]
stop = threading.Event()


def wait_stdin():
    sys.stdin.read()
    stop.set()


threading.Thread(target=wait_stdin, daemon=True).start()

sentinel = Sentinel(addrs, socket_timeout=0.5, socket_connect_timeout=0.5)
master = sentinel.master_for(name, socket_timeout=0.5, socket_connect_timeout=0.5)
acked, attempts_failed, n = [], 0, 0
last_ok, pause = None, 0.0
while not stop.is_set():
    key = "py:%d" % n
    try:
        master.set(key, n)
        waited = master.execute_command("WAIT", 1, 500)
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
        # ResponseError covers READONLY from a demoted master. The same
        # key is written again: SET is idempotent.
        attempts_failed += 1
        time.sleep(0.02)
        continue
    now = time.time()
    if last_ok is not None:
        pause = max(pause, now - last_ok)
    last_ok = now
    if waited >= 1:
        acked.append([key, int(now * 1000)])
    n += 1
    time.sleep(0.005)
print(json.dumps({"acked": acked, "writes": n, "failed": attempts_failed, "pause_ms": int(pause * 1000)}))
