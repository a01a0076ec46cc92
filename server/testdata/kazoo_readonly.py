"""Connects kazoo read-only (read_only=True) to one server and prints what it sees:
the connection state, a node's data, and how a write fails."""
import logging
import sys

from kazoo.client import KazooClient

logging.basicConfig(level=logging.CRITICAL)
hosts, path = sys.argv[1], sys.argv[2]
zk = KazooClient(hosts=hosts, read_only=True, timeout=10)
zk.start(timeout=20)
print("state", zk.client_state)
print("get", zk.get(path)[0].decode())
try:
    zk.create(path + "/kazoo", b"x")
    print("create ok")
except Exception as e:  # noqa: BLE001
    print("create", type(e).__name__)
zk.stop()
zk.close()
