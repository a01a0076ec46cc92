"""Cross-member freshness as kazoo users meet it: client A on one member writes, and right
after A's call returns client B on another member reads. Cases (first argument):

  party   A joins a Party and leaves it, once per round; right after each call returns,
          B lists the party. A stale list (A missing after its join returned, or present
          after its leave returned) is counted, not failed: ZooKeeper does not promise
          this (its followers apply a COMMIT at once, so it holds in practice), and the
          caller compares the count with ZooKeeper's.
  chroot  A creates /app-<round>; B opens a new client chrooted there on its member and
          at once creates a child and reads it back. B's new session is created after
          A's create returned, so its member has applied that create when B connects:
          any error, and kazoo's warning that the chroot path does not exist, fails.

Usage: kazoo_freshness.py party|chroot hostsA hostsB rounds
Prints one line per stale read or failure, then one JSON line:
{"case", "rounds", "stale", "failures", "seconds"}."""
import json
import sys
import time
import warnings

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException

case, hosts_a, hosts_b, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
stale, failures = [], []


def client(hosts):
    c = KazooClient(hosts=hosts, timeout=10)
    c.start(timeout=15)
    return c


def party(a):
    b = client(hosts_b)
    pa, pb = a.Party("/party", "A"), b.Party("/party", "B")
    a.ensure_path("/party")
    b.sync("/party")
    len(pb)  # B's Party makes sure of the path once, before the rounds
    for r in range(rounds):
        pa.join()
        if "A" not in list(pb):
            stale.append("round %d: B does not see A after A's join returned" % r)
        pa.leave()
        if "A" in list(pb):
            stale.append("round %d: B still sees A after A's leave returned" % r)
    b.stop()
    b.close()


def chroot(a):
    for r in range(rounds):
        a.create("/app-%d" % r)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            b = client("%s/app-%d" % (hosts_b, r))
        try:
            for w in caught:
                failures.append("round %d: %s" % (r, w.message))
            b.create("/child", b"%d" % r)
            data, _ = b.get("/child")
            if data != b"%d" % r:
                failures.append("round %d: read %r back" % (r, data))
        except KazooException as e:
            failures.append("round %d: %s" % (r, type(e).__name__))
        finally:
            b.stop()
            b.close()


a = client(hosts_a)
start = time.time()
{"party": party, "chroot": chroot}[case](a)
took = time.time() - start
a.stop()
a.close()
for line in stale + failures:
    print(line)
print(json.dumps({"case": case, "rounds": rounds, "stale": len(stale), "failures": failures,
                  "seconds": round(took, 2)}))
