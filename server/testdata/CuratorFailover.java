import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.locks.*;
import org.apache.curator.retry.*;
import org.apache.zookeeper.*;

/**
 * Curator against a cluster while its leader is killed (the pid given): a mutex held across
 * the failover stays held by the same session, another client cannot take it meanwhile, and
 * gets it once released; a watch set before the failover fires after it (the Java client
 * restores it with SetWatches if its connection moved). Exits 1 if a check fails.
 */
public class CuratorFailover {
  static int failed = 0;

  static void check(String name, boolean ok, Object got) {
    System.out.println((ok ? "ok   " : "FAIL ") + name + (ok ? "" : " got=" + got));
    if (!ok) failed++;
  }

  static CuratorFramework client(String hosts) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.newClient(hosts, 15000, 10000, new RetryForever(200));
    c.start();
    if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    return c;
  }

  public static void main(String[] args) throws Exception {
    String hosts = args[0];
    long leaderPid = Long.parseLong(args[1]);
    CuratorFramework a = client(hosts), b = client(hosts);
    InterProcessMutex ma = new InterProcessMutex(a, "/locks/failover");
    check("a takes the lock", ma.acquire(10, TimeUnit.SECONDS), null);
    long session = a.getZookeeperClient().getZooKeeper().getSessionId();
    a.create().orSetData().forPath("/watched", "before".getBytes());
    BlockingQueue<WatchedEvent> events = new LinkedBlockingQueue<>();
    a.getZookeeperClient().getZooKeeper().getData("/watched", e -> events.add(e), null);

    ProcessHandle.of(leaderPid).ifPresent(ProcessHandle::destroyForcibly);
    long start = System.nanoTime();
    // Any write through the cluster confirms it serves again.
    a.create().orSetData().forPath("/failover-probe", "x".getBytes());
    System.out.printf("a write after the kill took %.2fs%n", (System.nanoTime() - start) / 1e9);

    b.setData().forPath("/watched", "after".getBytes());
    WatchedEvent changed = null;
    for (long end = System.nanoTime() + 20_000_000_000L; System.nanoTime() < end; ) {
      WatchedEvent e = events.poll(1, TimeUnit.SECONDS);
      if (e != null && e.getType() != Watcher.Event.EventType.None) {
        changed = e;
        break;
      }
    }
    check("watch fired across the failover", changed != null && changed.getType() == Watcher.Event.EventType.NodeDataChanged
        && "/watched".equals(changed.getPath()), changed);
    check("a's session kept", a.getZookeeperClient().getZooKeeper().getSessionId() == session, null);
    check("a still holds the lock", ma.isAcquiredInThisProcess() && a.getChildren().forPath("/locks/failover").size() == 1,
        a.getChildren().forPath("/locks/failover"));
    InterProcessMutex mb = new InterProcessMutex(b, "/locks/failover");
    check("b cannot take it while a holds it", !mb.acquire(2, TimeUnit.SECONDS), null);
    ma.release();
    check("b takes it once a released it", mb.acquire(10, TimeUnit.SECONDS), null);
    mb.release();
    a.close();
    b.close();
    if (failed > 0) {
      System.out.println("FAILED: " + failed);
      System.exit(1);
    }
    System.out.println("all passed");
  }
}
