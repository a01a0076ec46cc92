import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.atomic.*;
import org.apache.curator.framework.recipes.cache.*;
import org.apache.curator.framework.recipes.leader.*;
import org.apache.curator.framework.recipes.locks.*;
import org.apache.curator.retry.*;
import org.apache.zookeeper.*;
import org.apache.zookeeper.data.*;

/** Drives a server with the ZooKeeper Java API and Curator 5.4; exits 1 if a check fails. */
public class Smoke {
  static int failed = 0;

  static void check(String name, boolean ok, Object got) {
    System.out.println((ok ? "ok   " : "FAIL ") + name + (ok ? "" : " got=" + got));
    if (!ok) failed++;
  }

  static final CountDownLatch led = new CountDownLatch(1);

  public static void main(String[] args) throws Exception {
    String hosts = args[0];
    CuratorFramework c = CuratorFrameworkFactory.newClient(hosts, 15000, 10000, new RetryOneTime(100));
    c.start();
    check("connected", c.blockUntilConnected(20, TimeUnit.SECONDS), null);
    ZooKeeper zk = c.getZookeeperClient().getZooKeeper();

    InterProcessMutex m = new InterProcessMutex(c, "/locks/m");
    check("mutex", m.acquire(10, TimeUnit.SECONDS), null);
    m.release();

    InterProcessReadWriteLock rw = new InterProcessReadWriteLock(c, "/locks/rw");
    check("read lock", rw.readLock().acquire(10, TimeUnit.SECONDS), null);
    rw.readLock().release();

    DistributedAtomicLong l = new DistributedAtomicLong(c, "/counter", new RetryOneTime(10));
    AtomicValue<Long> v = l.increment();
    check("atomic long", v.succeeded() && v.postValue() == 1L, v.postValue());

    c.create().withTtl(60000).withMode(CreateMode.PERSISTENT_WITH_TTL).forPath("/ttl", "x".getBytes());
    Stat st = c.checkExists().forPath("/ttl");
    check("ttl node shows owner 0", st != null && st.getEphemeralOwner() == 0, st);
    c.create().withMode(CreateMode.CONTAINER).forPath("/cont");
    check("container exists", c.checkExists().forPath("/cont") != null, null);

    List<org.apache.curator.framework.api.transaction.CuratorTransactionResult> tx = c.transaction().forOperations(
        c.transactionOp().create().forPath("/tx1"), c.transactionOp().setData().forPath("/tx1", "d".getBytes()));
    check("curator transaction", tx.size() == 2 && tx.get(1).getResultStat().getVersion() == 1, tx);

    try {
      zk.multi(Arrays.asList(Op.create("/tx2", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT), Op.check("/tx1", 5)));
      check("failed multi throws", false, "no exception");
    } catch (KeeperException.BadVersionException e) {
      List<OpResult> r = e.getResults();
      check("failed multi results", r.size() == 2 && ((OpResult.ErrorResult) r.get(0)).getErr() == 0
          && ((OpResult.ErrorResult) r.get(1)).getErr() == KeeperException.Code.BADVERSION.intValue(), r);
    }
    check("failed multi rolled back", zk.exists("/tx2", false) == null, null);

    zk.create("/e1", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
    check("getEphemerals", zk.getEphemerals("/").equals(Arrays.asList("/e1")), zk.getEphemerals("/"));
    check("getAllChildrenNumber", zk.getAllChildrenNumber("/tx1") == 0, null);
    check("whoAmI", zk.whoAmI().toString().contains("127.0.0.1"), zk.whoAmI());

    BlockingQueue<WatchedEvent> evs = new LinkedBlockingQueue<>();
    zk.addWatch("/tx1", evs::add, AddWatchMode.PERSISTENT_RECURSIVE);
    zk.create("/tx1/child", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    zk.setData("/tx1", "e".getBytes(), -1);
    WatchedEvent e1 = evs.poll(10, TimeUnit.SECONDS), e2 = evs.poll(10, TimeUnit.SECONDS);
    check("recursive watch", e1 != null && e1.getType() == Watcher.Event.EventType.NodeCreated && "/tx1/child".equals(e1.getPath())
        && e2 != null && e2.getType() == Watcher.Event.EventType.NodeDataChanged, e1 + " " + e2);
    zk.removeAllWatches("/tx1", Watcher.WatcherType.Any, false);

    CountDownLatch cached = new CountDownLatch(1);
    CuratorCache cache = CuratorCache.build(c, "/cached");
    cache.listenable().addListener((type, oldData, data) -> {
      if (type == CuratorCacheListener.Type.NODE_CREATED && data.getPath().equals("/cached/x")) cached.countDown();
    });
    cache.start();
    c.create().creatingParentsIfNeeded().forPath("/cached/x");
    check("curator cache", cached.await(10, TimeUnit.SECONDS), null);
    cache.close();

    LeaderLatch ll = new LeaderLatch(c, "/latch");
    ll.start();
    check("leader latch", ll.await(10, TimeUnit.SECONDS), null);
    ll.close();

    LeaderSelector sel = new LeaderSelector(c, "/selector", new LeaderSelectorListenerAdapter() {
      public void takeLeadership(CuratorFramework cf) throws Exception { led.countDown(); }
    });
    sel.start();
    check("leader selector", led.await(10, TimeUnit.SECONDS), null);
    sel.close();

    org.apache.curator.framework.recipes.shared.SharedCount sc = new org.apache.curator.framework.recipes.shared.SharedCount(c, "/shared", 0);
    sc.start();
    check("shared count", sc.trySetCount(sc.getVersionedValue(), 7) && sc.getCount() == 7, sc.getCount());
    sc.close();

    org.apache.curator.framework.recipes.barriers.DistributedBarrier db = new org.apache.curator.framework.recipes.barriers.DistributedBarrier(c, "/dbarrier");
    db.setBarrier();
    check("barrier holds", !db.waitOnBarrier(100, TimeUnit.MILLISECONDS), null);
    db.removeBarrier();
    check("barrier released", db.waitOnBarrier(5, TimeUnit.SECONDS), null);

    BlockingQueue<String> consumed = new LinkedBlockingQueue<>();
    org.apache.curator.framework.recipes.queue.DistributedQueue<String> dq = org.apache.curator.framework.recipes.queue.QueueBuilder.builder(c,
        new org.apache.curator.framework.recipes.queue.QueueConsumer<String>() {
          public void consumeMessage(String m) { consumed.add(m); }
          public void stateChanged(CuratorFramework cf, org.apache.curator.framework.state.ConnectionState s) {}
        },
        new org.apache.curator.framework.recipes.queue.QueueSerializer<String>() {
          public byte[] serialize(String m) { return m.getBytes(); }
          public String deserialize(byte[] b) { return new String(b); }
        }, "/dqueue").buildQueue();
    dq.start();
    dq.put("hello");
    check("distributed queue", "hello".equals(consumed.poll(10, TimeUnit.SECONDS)), null);
    dq.close();

    org.apache.curator.framework.recipes.nodes.PersistentNode pn = new org.apache.curator.framework.recipes.nodes.PersistentNode(c, CreateMode.EPHEMERAL, false, "/pnode", "p".getBytes());
    pn.start();
    check("persistent node", pn.waitForInitialCreate(10, TimeUnit.SECONDS) && c.checkExists().forPath("/pnode") != null, null);
    pn.close();

    zk.sync("/", null, null);
    c.close();
    System.out.println(failed == 0 ? "all passed" : failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
