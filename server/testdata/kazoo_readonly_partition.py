"""Connects kazoo read-only capable (read_only=True) to one member while it has a quorum,
sets a watch, and asks for the cut ("@cut" on stdout, an answer on stdin); prints the
states it goes through until it is served read-only and what it reads there, then asks
for the quorum back ("@back") and prints how it comes back to read-write."""
import logging
import sys
import threading
import time

from kazoo.client import KazooClient

logging.basicConfig(level=logging.CRITICAL)
hosts, path = sys.argv[1], sys.argv[2]
states = []
zk = KazooClient(hosts=hosts, read_only=True, timeout=10)
zk.add_listener(lambda s: states.append(str(s)))


def wait_for(client_state):
    deadline = time.time() + 60
    while zk.client_state != client_state and time.time() < deadline:
        time.sleep(0.1)
    print("states", " ".join(states), "client state", zk.client_state)
    del states[:]


def ask(what):
    print("@" + what, flush=True)
    sys.stdin.readline()


zk.start(timeout=20)
print("before: state", zk.client_state)
zk.get(path, watch=lambda e: print("watch", e.type, e.path, flush=True))
del states[:]
ask("cut")
wait_for("CONNECTED_RO")
if zk.client_state == "CONNECTED_RO":
    print("get", zk.get(path)[0].decode())
    try:
        zk.set(path, b"x")
        print("set ok")
    except Exception as e:  # noqa: BLE001
        print("set", type(e).__name__)
ask("back")
wait_for("CONNECTED")
if zk.client_state == "CONNECTED":
    print("get", zk.get(path)[0].decode())
    zk.set(path, b"rw")
    print("set ok")
threading.Thread(target=zk.stop, daemon=True).start()
time.sleep(1)
