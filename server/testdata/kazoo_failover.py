"""kazoo against a cluster while its leader is killed (kill -9 of the pid given): the
session survives, its ephemeral stays, writes go on after a retry, a DataWatch sees the
change. (kazoo itself drops plain watches when its connection drops, telling them with a
NONE event, so a plain watch either fires CHANGED or gets that NONE event.)
Prints one line per check and exits 1 on failure."""
import os
import signal
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.recipe.watchers import DataWatch
from kazoo.retry import KazooRetry

hosts, leader_pid = sys.argv[1], int(sys.argv[2])
failures = []


def check(name, cond, got=None):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else " got=%r" % (got,)), flush=True)
    if not cond:
        failures.append(name)


states = []
zk = KazooClient(hosts=hosts, timeout=10.0,
                 connection_retry=KazooRetry(max_tries=-1, max_delay=0.5),
                 command_retry=KazooRetry(max_tries=-1, max_delay=0.5, deadline=30))
zk.add_listener(lambda s: states.append(s))
zk.start(timeout=30)
session = zk.client_id[0]
zk.create("/eph", b"mine", ephemeral=True)
zk.ensure_path("/w")
fired = threading.Event()
events = []


def on_change(ev):
    events.append(ev)
    fired.set()


zk.get("/w", watch=on_change)
seen = []
after = threading.Event()


def on_data(data, stat):
    seen.append(data)
    if data == b"after":
        after.set()


DataWatch(zk, "/w", on_data)
for i in range(20):
    zk.create("/acked/n-", b"%d" % i, sequence=True, makepath=True)

os.kill(leader_pid, signal.SIGKILL)
start = time.time()
# Writes through the failover: the in-flight one may see ConnectionLoss; the retry runs it
# again (set is idempotent).
zk.retry(zk.set, "/w", b"after")
took = time.time() - start
print("first write after the kill took %.2fs" % took, flush=True)
check("write after the failover", zk.retry(zk.get, "/w")[0] == b"after")
check("plain watch fired (or was dropped by kazoo on a disconnect)",
      fired.wait(20) and len(events) == 1 and events[0].type in ("CHANGED", "NONE"), events)
check("DataWatch saw the change", after.wait(20), seen)
check("same session", zk.client_id[0] == session, (zk.client_id[0], session))
check("ephemeral kept", zk.retry(zk.exists, "/eph") is not None)
kids = zk.retry(zk.get_children, "/acked")
check("acknowledged writes kept", len(kids) == 20, sorted(kids))
check("never lost the session", "LOST" not in states, states)
zk.stop()
zk.close()
if failures:
    print("FAILED: " + ", ".join(failures))
    sys.exit(1)
print("all passed")
