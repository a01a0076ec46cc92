import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.cache.*;
import org.apache.curator.framework.recipes.leader.*;
import org.apache.curator.framework.recipes.locks.*;
import org.apache.curator.framework.recipes.nodes.*;
import org.apache.curator.framework.recipes.watch.*;
import org.apache.curator.framework.state.*;
import org.apache.curator.retry.*;
import org.apache.zookeeper.*;

/**
 * Curator recipes waiting on watches while members of a 3-member cluster are killed: first
 * the follower client y is connected to, which is then restarted, then the leader. y waits
 * for a mutex and a leader latch that x holds, and has a persistent recursive watcher, a
 * CuratorCache, an ephemeral PersistentNode and one-shot data, exists and child watches;
 * x changes what y watches while y moves. Asks the test to kill or restart a member by
 * printing "@kill <addr>", "@kill leader" or "@restart <addr>" and reading one line back
 * (the killed member's address). Exits 1 if a check fails.
 */
public class CuratorRecipesFailover {
  static int failed = 0;
  static final BufferedReader in = new BufferedReader(new InputStreamReader(System.in));

  static void check(String name, boolean ok, Object got) {
    System.out.println((ok ? "ok   " : "FAIL ") + name + (ok ? "" : " got=" + got));
    if (!ok) failed++;
  }

  static String ask(String what) throws IOException {
    System.out.println("@" + what);
    System.out.flush();
    return in.readLine();
  }

  // The member the client is connected to, from ZooKeeper.toString's remoteserver.
  static String remote(CuratorFramework c) throws Exception {
    String s = c.getZookeeperClient().getZooKeeper().toString();
    int i = s.indexOf("remoteserver:");
    return i < 0 ? "" : s.substring(i + "remoteserver:".length()).split(" ")[0].replaceFirst("^[^/]*/", "");
  }

  static CuratorFramework client(String hosts) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.newClient(hosts, 20000, 10000, new ExponentialBackoffRetry(100, 29, 1000));
    c.start();
    if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    return c;
  }

  static <T> T poll(BlockingQueue<T> q, java.util.function.Predicate<T> want) throws InterruptedException {
    for (long end = System.nanoTime() + 30_000_000_000L; System.nanoTime() < end; ) {
      T e = q.poll(1, TimeUnit.SECONDS);
      if (e != null && want.test(e)) return e;
    }
    return null;
  }

  /** One round: x holds what y waits for, the member is killed, x changes and releases. */
  static void round(String tag, CuratorFramework x, CuratorFramework y, String kill) throws Exception {
    String base = "/recipes/" + tag;
    x.create().creatingParentsIfNeeded().forPath(base + "/tree");
    x.create().forPath(base + "/w", "0".getBytes());
    InterProcessMutex mx = new InterProcessMutex(x, base + "/lock"), my = new InterProcessMutex(y, base + "/lock");
    check(tag + ": x takes the mutex", mx.acquire(10, TimeUnit.SECONDS), null);
    CountDownLatch yHas = new CountDownLatch(1), yDone = new CountDownLatch(1);
    Thread yLock = new Thread(() -> {
      try {
        if (my.acquire(60, TimeUnit.SECONDS)) {
          yHas.countDown();
          yDone.await();
          my.release();
        }
      } catch (Exception e) {
        e.printStackTrace();
      }
    });
    yLock.start();
    LeaderLatch lx = new LeaderLatch(x, base + "/latch", "x"), ly = new LeaderLatch(y, base + "/latch", "y");
    lx.start();
    check(tag + ": x leads", lx.await(10, TimeUnit.SECONDS), null);
    ly.start();
    BlockingQueue<String> recursive = new LinkedBlockingQueue<>();
    PersistentWatcher pw = new PersistentWatcher(y, base + "/tree", true);
    pw.getListenable().addListener(e -> recursive.add(e.getType() + " " + e.getPath()));
    pw.start();
    CuratorCache cache = CuratorCache.build(y, base + "/tree");
    CountDownLatch primed = new CountDownLatch(1);
    cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(primed::countDown).build());
    cache.start();
    check(tag + ": cache primed", primed.await(10, TimeUnit.SECONDS), null);
    PersistentNode eph = new PersistentNode(y, CreateMode.EPHEMERAL, false, base + "/eph", "y".getBytes());
    eph.start();
    check(tag + ": ephemeral created", eph.waitForInitialCreate(10, TimeUnit.SECONDS), null);
    BlockingQueue<String> oneShot = new LinkedBlockingQueue<>();
    Watcher record = e -> oneShot.add(e.getType() + " " + e.getPath());
    y.getData().usingWatcher(record).forPath(base + "/w");
    y.checkExists().usingWatcher(record).forPath(base + "/later");
    y.getChildren().usingWatcher(record).forPath(base + "/tree");
    long session = y.getZookeeperClient().getZooKeeper().getSessionId();
    List<ConnectionState> states = Collections.synchronizedList(new ArrayList<>());
    ConnectionStateListener l = (cf, s) -> states.add(s);
    y.getConnectionStateListenable().addListener(l);
    Thread.sleep(500);

    String killed = ask(kill);
    // x's changes while y moves (x is never on the member killed, see main).
    x.create().forPath(base + "/tree/a", "a".getBytes());
    x.setData().forPath(base + "/w", "1".getBytes());
    x.create().forPath(base + "/later");
    x.setData().forPath(base + "/tree", "t".getBytes());
    mx.release();
    lx.close();
    check(tag + ": y gets the mutex x released", yHas.await(60, TimeUnit.SECONDS), remote(y));
    yDone.countDown();
    yLock.join(10000);
    check(tag + ": y leads once x left", ly.await(60, TimeUnit.SECONDS), ly.getState());
    Set<String> fired = new TreeSet<>();
    for (int i = 0; i < 3; i++) {
      String e = poll(oneShot, s -> !s.startsWith("None"));
      if (e != null) fired.add(e);
    }
    check(tag + ": one-shot watches fired for what y missed", fired.equals(new TreeSet<>(Arrays.asList(
        "NodeDataChanged " + base + "/w", "NodeCreated " + base + "/later", "NodeChildrenChanged " + base + "/tree"))), fired);
    // The recursive watch lives on after the move (the Java client sends it in SetWatches2).
    y.create().forPath(base + "/tree/b", "b".getBytes());
    String e = poll(recursive, s -> s.equals("NodeCreated " + base + "/tree/b"));
    check(tag + ": persistent recursive watch sees y's create", e != null, recursive);
    x.setData().forPath(base + "/tree/a", "a2".getBytes());
    e = poll(recursive, s -> s.equals("NodeDataChanged " + base + "/tree/a"));
    check(tag + ": persistent recursive watch sees x's change", e != null, recursive);
    Map<String, String> want = new TreeMap<>(Map.of(base + "/tree", "t", base + "/tree/a", "a2", base + "/tree/b", "b"));
    Map<String, String> got = new TreeMap<>();
    for (long end = System.nanoTime() + 20_000_000_000L; System.nanoTime() < end && !got.equals(want); Thread.sleep(200)) {
      got.clear();
      cache.stream().forEach(d -> got.put(d.getPath(), new String(d.getData())));
    }
    check(tag + ": cache matches the tree", got.equals(want), got);
    x.sync().forPath(base + "/eph");
    check(tag + ": y's ephemeral kept", x.checkExists().forPath(base + "/eph") != null, null);
    check(tag + ": y kept its session", y.getZookeeperClient().getZooKeeper().getSessionId() == session
        && !states.contains(ConnectionState.LOST), states);
    System.out.println(tag + ": killed " + killed + ", y on " + remote(y) + ", states " + states);
    y.getConnectionStateListenable().removeListener(l);
    ly.close();
    pw.close();
    cache.close();
    eph.close();
    x.sync().forPath(base);
    check(tag + ": y's ephemeral deleted by close", x.checkExists().forPath(base + "/eph") == null, null);
    if (!kill.equals("kill leader")) ask("restart " + killed);
  }

  public static void main(String[] args) throws Exception {
    String hosts = args[0], leader = args[1];
    // y on a follower, x on the other follower (neither is killed with y's member; the
    // leader's kill moves neither).
    CuratorFramework y = null, x = null;
    for (int i = 0; i < 50 && y == null; i++) {
      CuratorFramework c = client(hosts);
      if (remote(c).equals(leader)) c.close();
      else y = c;
    }
    for (int i = 0; i < 50 && x == null; i++) {
      CuratorFramework c = client(hosts);
      if (remote(c).equals(leader) || remote(c).equals(remote(y))) c.close();
      else x = c;
    }
    if (y == null || x == null) throw new IllegalStateException("no clients on the followers");
    round("follower", x, y, "kill " + remote(y));
    // y moved to x's member or the leader; x may now share y's member: kill the leader.
    round("leader", x, y, "kill leader");

    // Writes acknowledged to y while nothing is killed, read back by the test on every member.
    for (int i = 0; i < 20; i++) y.create().creatingParentsIfNeeded().forPath("/recipes/acked/n-" + i);
    y.close();
    x.close();
    System.out.println(failed == 0 ? "all passed" : failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
