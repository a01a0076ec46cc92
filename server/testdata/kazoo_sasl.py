"""kazoo with SASL DIGEST-MD5 (puresasl): prints one line per step, the same for any
server that behaves as ZooKeeper 3.8 does with the JAAS users bob and alice."""
import sys

from kazoo.client import KazooClient
from kazoo.retry import KazooRetry
from kazoo.security import make_acl

hosts = sys.argv[1]
# A suffix for the node names, for a second run on a server that holds the first's.
suffix = sys.argv[2] if len(sys.argv) > 2 else ''
KZ, KZ_ALICE = '/kz' + suffix, '/kz-alice' + suffix


def client(user=None, password=None):
    opts = None
    if user is not None:
        opts = {'mechanism': 'DIGEST-MD5', 'username': user, 'password': password}
    zk = KazooClient(hosts=hosts, sasl_options=opts, timeout=10,
                     connection_retry=KazooRetry(max_tries=0))
    try:
        zk.start(timeout=8)
        return zk
    except Exception as e:  # noqa: BLE001 - the type is the outcome
        print('%s start: %s' % (user, type(e).__name__))
        zk.stop()
        return None


def step(name, f):
    try:
        r = f()
        if suffix and isinstance(r, str):
            r = r.replace(suffix, '')  # a created path, named as in a first run
        print('%s: %r' % (name, r))
    except Exception as e:  # noqa: BLE001 - the type is the outcome
        print('%s: %s' % (name, type(e).__name__))


bob = client('bob', 'bob-secret')
step('bob create', lambda: bob.create(KZ, b'v', acl=[make_acl('sasl', 'bob', all=True)]))
step('bob get', lambda: bob.get(KZ)[0])
step('bob acl', lambda: [(a.perms, a.id.scheme, a.id.id) for a in bob.get_acls(KZ)[0]])

alice = client('alice', 'alice-secret')
step('alice get', lambda: alice.get(KZ)[0])
step('alice create own', lambda: alice.create(KZ_ALICE, b'a', acl=[make_acl('sasl', 'alice', read=True)]))
step('alice get own', lambda: alice.get(KZ_ALICE)[0])
alice.stop()

anon = client()
step('anonymous get', lambda: anon.get(KZ)[0])
anon.stop()

wrong = client('bob', 'not-it')
if wrong is not None:
    step('wrong password get', lambda: wrong.get(KZ)[0])
    wrong.stop()

step('bob still get', lambda: bob.get(KZ)[0])
bob.stop()
print('done')
