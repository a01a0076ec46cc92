"""Drives a server with kazoo's client and recipes; prints one line per check, exits 1 on failure."""
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import (BadVersionError, NodeExistsError, NoNodeError,
                              NotEmptyError, NoAuthError, RolledBackError)
from kazoo.security import make_digest_acl

hosts = sys.argv[1]
failures = []


def check(name, cond, got=None):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else " got=%r" % (got,)))
    if not cond:
        failures.append(name)


def expect_error(name, exc, fn):
    try:
        fn()
    except exc:
        check(name, True)
        return
    except Exception as e:  # noqa: BLE001
        check(name, False, e)
        return
    check(name, False, "no error")


zk = KazooClient(hosts=hosts, timeout=10)
zk.start(timeout=15)
check("server_version", zk.server_version()[:2] == (3, 8), zk.server_version())

zk.create("/k", b"v")
data, st = zk.get("/k")
check("get data and version", data == b"v" and st.version == 0 and st.czxid == st.mzxid == st.pzxid, st)
st2 = zk.set("/k", b"w")
check("set bumps version and mzxid", st2.version == 1 and st2.mzxid > st.mzxid, st2)
expect_error("create existing: NodeExists", NodeExistsError, lambda: zk.create("/k"))
expect_error("set with wrong version: BadVersion", BadVersionError, lambda: zk.set("/k", b"x", version=7))
expect_error("create without parent: NoNode", NoNodeError, lambda: zk.create("/none/x"))
zk.create("/k/c")
expect_error("delete parent: NotEmpty", NotEmptyError, lambda: zk.delete("/k"))

# Sequential suffixes come from the parent's count of creates; cversion counts creates and deletes.
names = [zk.create("/seq/n-", makepath=True, sequence=True) for _ in range(3)]
zk.delete(names[1])
names.append(zk.create("/seq/n-", sequence=True))
check("sequential names", [n.rsplit("-", 1)[1] for n in names] == ["0000000000", "0000000001", "0000000002", "0000000003"], names)
check("parent cversion", zk.exists("/seq").cversion == 5, zk.exists("/seq"))

# Transactions are all or nothing.
t = zk.transaction()
t.create("/tx-a")
t.create("/no/such")
res = t.commit()
check("failed transaction results", isinstance(res[0], RolledBackError) and isinstance(res[1], NoNodeError), res)
check("failed transaction left nothing", zk.exists("/tx-a") is None)

# Watches fire once, with the event before the data that follows it.
events = []
got = threading.Event()
zk.get("/k", watch=lambda e: (events.append(e), got.set()))
zk.set("/k", b"again")
got.wait(10)
check("data watch", [(e.type, e.path) for e in events] == [("CHANGED", "/k")], events)

# ACLs.
zk2 = KazooClient(hosts=hosts, timeout=10)
zk2.start(timeout=15)
zk.add_auth("digest", "alice:secret")
zk.create("/secret", b"s", acl=[make_digest_acl("alice", "secret", all=True)])
# On a cluster the sessions may be on different members: a client syncs before reading
# what another session wrote, as ZooKeeper requires.
zk2.sync("/secret")
expect_error("other session without auth: NoAuth", NoAuthError, lambda: zk2.get("/secret"))
check("owner reads", zk.get("/secret")[0] == b"s")

# Ephemerals go with their session; another session's exists watch sees it.
zk2.create("/eph", ephemeral=True)
gone = threading.Event()
zk.sync("/eph")
zk.exists("/eph", watch=lambda e: gone.set() if e.type == "DELETED" else None)
zk2.stop()
zk2.close()
check("ephemeral deleted on close", gone.wait(10) and zk.exists("/eph") is None)

# Recipes.
lock_holders = []
def worker(i):
    c = KazooClient(hosts=hosts, timeout=10)
    c.start(timeout=15)
    with c.Lock("/lock", "w%d" % i):
        lock_holders.append(("in", i))
        time.sleep(0.05)
        lock_holders.append(("out", i))
    c.stop()
    c.close()
threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
for th in threads:
    th.start()
for th in threads:
    th.join(30)
paired = all(lock_holders[k][0] == "in" and lock_holders[k + 1] == ("out", lock_holders[k][1]) for k in range(0, len(lock_holders), 2))
check("lock: no overlap", len(lock_holders) == 6 and paired, lock_holders)

counter = zk.Counter("/counter")
for _ in range(5):
    counter += 1
check("counter", counter.value == 5, counter.value)

q = zk.Queue("/queue")
for b in (b"1", b"2", b"3"):
    q.put(b)
check("queue order", [q.get(), q.get(), q.get()] == [b"1", b"2", b"3"])

sem = zk.Semaphore("/sem", max_leases=1)
check("semaphore", sem.acquire(timeout=5))
sem.release()

election_won = []
e = zk.Election("/election", "me")
th = threading.Thread(target=lambda: e.run(lambda: election_won.append(True)))
th.start()
th.join(10)
check("election", election_won == [True])

rw_order = []
def reader(i):
    c = KazooClient(hosts=hosts, timeout=10)
    c.start(timeout=15)
    with c.ReadLock("/rw", "r%d" % i):
        rw_order.append("r")
        time.sleep(0.05)
    c.stop()
    c.close()
with zk.WriteLock("/rw", "writer"):
    readers = [threading.Thread(target=reader, args=(i,)) for i in range(2)]
    for th in readers:
        th.start()
    time.sleep(0.2)
    check("readers wait for the writer", rw_order == [], rw_order)
for th in readers:
    th.join(30)
check("readers run after the writer", rw_order == ["r", "r"], rw_order)

barrier = zk.Barrier("/barrier")
barrier.create()
released = []
th = threading.Thread(target=lambda: released.append(barrier.wait(10)))
th.start()
time.sleep(0.1)
check("barrier holds", released == [])
barrier.remove()
th.join(15)
check("barrier releases", released == [True], released)

entered = []
def double(i):
    c = KazooClient(hosts=hosts, timeout=10)
    c.start(timeout=15)
    db = c.DoubleBarrier("/double", 2, identifier="p%d" % i)
    db.enter()
    entered.append(i)
    db.leave()
    c.stop()
    c.close()
ths = [threading.Thread(target=double, args=(i,)) for i in range(2)]
for th in ths:
    th.start()
for th in ths:
    th.join(30)
check("double barrier", sorted(entered) == [0, 1], entered)

lq = zk.LockingQueue("/lqueue")
lq.put(b"job")
check("locking queue get", lq.get(5) == b"job")
check("locking queue consume", lq.consume())

party = zk.Party("/party", "me")
party.join()
check("party", len(party) == 1 and list(party) == ["me"], list(party))
party.leave()

zk.stop()
zk.close()
print("%d passed, %d failed" % (0, len(failures)) if failures else "all passed")
sys.exit(1 if failures else 0)
