"""kazoo over TLS with a client certificate: prints one line per step (outcomes and
ACLs), for comparing ZooKeeper with zkraft. Args: secure host:port, CA file, cert file,
key file, prefix."""
import json
import sys

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.security import ACL, Id, Permissions

hosts, ca, cert, key, prefix = sys.argv[1:6]
zk = KazooClient(hosts=hosts, use_ssl=True, ca=ca, certfile=cert, keyfile=key,
                 verify_certs=True, timeout=15)
zk.start(timeout=15)


def step(name, fn):
    try:
        value = fn()
        out = {"step": name, "value": value}
    except KazooException as e:
        out = {"step": name, "error": type(e).__name__}
    print(json.dumps(out, sort_keys=True, default=str))


def acl_list(path):
    acls, _ = zk.get_acls(path)
    return [[a.perms, a.id.scheme, a.id.id] for a in acls]


mine = [ACL(Permissions.ALL, Id("x509", "CN=client1,O=zkraft"))]
step("create x509 node", lambda: zk.create(prefix + "-x509", b"v", acl=mine))
step("get x509 node", lambda: zk.get(prefix + "-x509")[0])
step("getAcl x509 node", lambda: acl_list(prefix + "-x509"))
step("create auth node", lambda: zk.create(prefix + "-auth", b"a",
                                           acl=[ACL(Permissions.READ | Permissions.WRITE, Id("auth", ""))]))
step("getAcl auth node", lambda: acl_list(prefix + "-auth"))
step("set auth node", lambda: zk.set(prefix + "-auth", b"b").version)
step("delete auth node (no DELETE on parent needed: world)", lambda: zk.delete(prefix + "-auth"))
step("invalid x509 id", lambda: zk.create(prefix + "-bad", b"", acl=[ACL(Permissions.ALL, Id("x509", "nonsense"))]))
step("add_auth x509", lambda: zk.add_auth("x509", "ignored"))
step("get after add_auth", lambda: zk.get(prefix + "-x509")[0])
zk.stop()
zk.close()
