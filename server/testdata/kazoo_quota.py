"""Quotas through kazoo: sets a quota as zkCli does (limits and stats nodes), writes over
it, and prints each outcome and the zookeeper_stats node after it. The Go test runs this
against ZooKeeper 3.8 and zkraft and compares the output line by line."""
import sys

from kazoo.client import KazooClient
from kazoo.exceptions import ZookeeperError, _zookeeper_exception


@_zookeeper_exception(-125)
class QuotaExceededError(ZookeeperError):
    """kazoo 2.8 has no class for QUOTAEXCEEDED (-125); without one it cannot report it."""


zk = KazooClient(hosts=sys.argv[1], timeout=10)
zk.start(timeout=20)
STATS = "/zookeeper/quota/q/zookeeper_stats"
LIMITS = "/zookeeper/quota/q/zookeeper_limits"


def stats(label):
    data, st = zk.get(STATS)
    # The stats node's own stat stays as created: same mzxid, version 0.
    print("%-28s %s version=%d mzxid==czxid=%s dataLength=%d" % (
        label, data.decode(), st.version, st.mzxid == st.czxid, st.dataLength))


def attempt(label, fn):
    try:
        r = fn()
        print("%-28s ok %s" % (label, r if isinstance(r, (str, list)) else ""))
    except ZookeeperError as e:
        print("%-28s %s" % (label, type(e).__name__))
    stats("  stats")


zk.create("/q", b"")
zk.create("/q/a", b"x")
zk.create("/zookeeper/quota/q", None)
zk.create(LIMITS, b"count=-1,bytes=-1=;byteHardLimit=12;countHardLimit=5")
zk.create(STATS, b"count=0,bytes=0")
stats("after setquota")
attempt("create /q/b 5 bytes", lambda: zk.create("/q/b", b"12345"))
attempt("set /q/a +9 bytes", lambda: zk.set("/q/a", b"0123456789"))
attempt("set /q/a bad version", lambda: zk.set("/q/a", b"0123456789", version=7))
attempt("set /q/a same size", lambda: zk.set("/q/a", b"y"))
attempt("create ephemeral", lambda: zk.create("/q/e", b"ee", ephemeral=True))
attempt("create sequential", lambda: zk.create("/q/s-", b"s", sequence=True))
attempt("create over count", lambda: zk.create("/q/c", b""))


def result(r):
    if isinstance(r, Exception):
        return type(r).__name__
    if hasattr(r, "mzxid"):
        return "stat version=%d dataLength=%d" % (r.version, r.dataLength)
    return r


def multi(label, ops):
    t = zk.transaction()
    for op in ops:
        op(t)
    print("%-28s %s" % (label, [result(r) for r in t.commit()]))
    stats("  stats")


multi("multi delete+create", [lambda t: t.delete("/q/e"), lambda t: t.create("/q/m1", b"m")])
multi("multi create, create", [lambda t: t.delete("/q/b"), lambda t: t.create("/q/m2", b""),
                               lambda t: t.create("/q/m3", b"")])
multi("multi set over bytes", [lambda t: t.set_data("/q/a", b"abcdefghijklmnop"),
                               lambda t: t.check("/q", 0)])
multi("multi check fails", [lambda t: t.check("/q", 9), lambda t: t.create("/q/m4", b"")])
zk.set(LIMITS, b"count=-1,bytes=-1=;byteHardLimit=100;countHardLimit=100")
attempt("create after raise", lambda: zk.create("/q/c", b"cc"))
attempt("delete /q/c", lambda: zk.delete("/q/c"))
attempt("soft over", lambda: (zk.set(LIMITS, b"count=1,bytes=1"), zk.create("/q/soft", b"ss"))[1])
zk.delete(LIMITS)
attempt("create, limits gone", lambda: zk.create("/q/nolimit", b"n"))
zk.create(LIMITS, b"count=-1,bytes=-1=;countHardLimit=1")
attempt("create, limits back", lambda: zk.create("/q/back", b"b"))
zk.delete(STATS)
zk.create(STATS, b"garbage")
stats("stats recreated")
print("children", sorted(zk.get_children("/q")))
zk.stop()
print("done")
