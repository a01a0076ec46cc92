"""Differential steps: the same operations against any server, printed as normalized
JSON lines. Zxids become their rank among the zxids seen, times their rank among the
times seen, session ids their rank, so two servers can be compared line by line."""
import json
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.security import make_digest_acl, make_acl

hosts = sys.argv[1]
ranks = {"zxid": {}, "time": {}, "session": {}}


def rank(kind, v):
    if v in (0, -1):
        return v
    table = ranks[kind]
    if v not in table:
        table[v] = len(table) + 1
    return "%s%d" % (kind[0], table[v])


def stat(st):
    if st is None:
        return None
    return {"czxid": rank("zxid", st.czxid), "mzxid": rank("zxid", st.mzxid), "pzxid": rank("zxid", st.pzxid),
            "ctime": rank("time", st.ctime), "mtime": rank("time", st.mtime), "version": st.version,
            "cversion": st.cversion, "aversion": st.aversion,
            "ephemeralOwner": rank("session", st.ephemeralOwner), "dataLength": st.dataLength,
            "numChildren": st.numChildren}


def out(step, **kw):
    kw["step"] = step
    print(json.dumps(kw, sort_keys=True, default=str))


def do(step, fn):
    try:
        r = fn()
    except KazooException as e:
        out(step, error=type(e).__name__)
        return None
    if hasattr(r, "czxid"):
        out(step, stat=stat(r))
    elif isinstance(r, tuple) and len(r) == 2 and hasattr(r[1], "czxid"):
        val = r[0]
        if isinstance(val, bytes):
            val = val.decode("latin-1")
        elif isinstance(val, list) and val and hasattr(val[0], "perms"):
            val = [(a.perms, a.id.scheme, a.id.id) for a in val]
        out(step, value=val, stat=stat(r[1]))
    elif isinstance(r, list):
        out(step, value=[type(x).__name__ if isinstance(x, Exception) else x for x in r])
    else:
        out(step, value=r)
    return r


zk = KazooClient(hosts=hosts, timeout=10)
zk.start(timeout=15)
events = []
lock = threading.Lock()


def watcher(name):
    def w(ev):
        with lock:
            events.append((name, ev.type, ev.path))
    return w


for p in ["/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"]:
    do("stat " + p, lambda p=p: zk.exists(p))
do("acl /zookeeper/config", lambda: zk.get_acls("/zookeeper/config"))
do("create /d", lambda: zk.create("/d", b"data"))
do("get /d", lambda: zk.get("/d"))
do("exists watch /d/x", lambda: zk.exists("/d/x", watch=watcher("exists /d/x")))
do("children watch /d", lambda: zk.get_children("/d", watch=watcher("children /d")))
do("get watch /d", lambda: zk.get("/d", watch=watcher("data /d")))
do("create /d/x", lambda: zk.create("/d/x", b""))
do("set /d", lambda: zk.set("/d", b"new"))
do("set /d bad version", lambda: zk.set("/d", b"new", version=42))
for i in range(3):
    do("create seq %d" % i, lambda: zk.create("/d/s-", sequence=True))
do("delete /d/s-0000000002", lambda: zk.delete("/d/s-0000000002"))
do("create seq after delete", lambda: zk.create("/d/s-", sequence=True))
do("stat /d after seq", lambda: zk.exists("/d"))
do("children /d", lambda: sorted(zk.get_children("/d")))
do("create ephemeral", lambda: zk.create("/d/e", ephemeral=True))
do("child of ephemeral", lambda: zk.create("/d/e/c"))
do("delete non-empty", lambda: zk.delete("/d"))
do("delete missing", lambda: zk.delete("/d/none"))
do("delete bad version", lambda: zk.delete("/d/x", version=3))
do("create under missing", lambda: zk.create("/m/x"))
do("create bad path", lambda: zk.create("/d//x"))
do("delete /zookeeper", lambda: zk.delete("/zookeeper"))
do("create under /zookeeper/config", lambda: zk.create("/zookeeper/config/x"))
do("create empty acl", lambda: zk.create("/acl0", acl=[make_acl("digest", "nocolon", all=True)]))
do("create ip acl", lambda: zk.create("/ipacl", acl=[make_acl("ip", "127.0.0.0/8", read=True, write=True, create=True, delete=True, admin=True)]))
do("get ip acl", lambda: zk.get("/ipacl"))
do("create foreign ip acl", lambda: zk.create("/ipacl2", acl=[make_acl("ip", "10.0.0.1", read=True)]))
do("get foreign ip acl", lambda: zk.get("/ipacl2"))
# only whether it answered: a stat would rank zxids and times that later lines rank too
do("exists without READ", lambda: zk.exists("/ipacl2") is not None)
zk.add_auth("digest", "bob:pw")
do("create auth acl", lambda: zk.create("/authacl", acl=[make_acl("auth", "", all=True)]))
do("getacl auth acl", lambda: zk.get_acls("/authacl"))
do("setacl", lambda: zk.set_acls("/authacl", [make_digest_acl("bob", "pw", read=True, admin=True)]))
do("setacl bad version", lambda: zk.set_acls("/authacl", [make_digest_acl("bob", "pw", all=True)], version=7))
do("getacl after set", lambda: zk.get_acls("/authacl"))
do("write without WRITE", lambda: zk.set("/authacl", b"x"))

t = zk.transaction()
t.create("/t1", b"1")
t.set_data("/t1", b"2")
t.check("/t1", 1)
t.delete("/d/x")
do("transaction ok", lambda: [type(x).__name__ if isinstance(x, Exception) else (stat(x) if hasattr(x, "czxid") else x) for x in t.commit()])
t = zk.transaction()
t.create("/t2")
t.check("/t1", 99)
t.create("/t3")
do("transaction failing", lambda: t.commit())
do("after failing transaction", lambda: zk.exists("/t2"))
do("getAllChildrenNumber-like count", lambda: len(zk.get_children("/")))

time.sleep(0.5)
with lock:
    out("events", value=events)
zk.stop()
zk.close()
