import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.retry.*;
import org.apache.zookeeper.*;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.*;

/**
 * Curator 5.4 and the Java API over TLS: prints one line per step (outcomes, ACLs) for
 * comparing servers. Args: hosts, key store of CN=client1,O=zkraft, key store of
 * CN=client2,O=zkraft, trust store, password.
 */
public class CuratorTLS {
  static void step(String name, Callable<Object> fn) {
    try {
      System.out.println(name + ": " + fn.call());
    } catch (KeeperException e) {
      System.out.println(name + ": " + e.code());
    } catch (Exception e) {
      System.out.println(name + ": " + e);
    }
  }

  static ZKClientConfig tls(String keyStore, String trustStore, String password) throws Exception {
    ZKClientConfig cfg = new ZKClientConfig();
    cfg.setProperty("zookeeper.client.secure", "true");
    cfg.setProperty("zookeeper.clientCnxnSocket", "org.apache.zookeeper.ClientCnxnSocketNetty");
    cfg.setProperty("zookeeper.ssl.keyStore.location", keyStore);
    cfg.setProperty("zookeeper.ssl.keyStore.password", password);
    cfg.setProperty("zookeeper.ssl.trustStore.location", trustStore);
    cfg.setProperty("zookeeper.ssl.trustStore.password", password);
    return cfg;
  }

  public static void main(String[] args) throws Exception {
    String hosts = args[0], mine = args[1], other = args[2], trust = args[3], pw = args[4];
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(hosts)
        .sessionTimeoutMs(15000).connectionTimeoutMs(15000).retryPolicy(new RetryOneTime(100))
        .zkClientConfig(tls(mine, trust, pw)).build();
    c.start();
    step("curator connected", () -> c.blockUntilConnected(20, TimeUnit.SECONDS));
    List<ACL> onlyMe = Collections.singletonList(new ACL(ZooDefs.Perms.ALL, new Id("x509", "CN=client1,O=zkraft")));
    step("curator creates x509 node", () -> c.create().withACL(onlyMe).forPath("/curator-x509", "v".getBytes()));
    step("curator reads it", () -> new String(c.getData().forPath("/curator-x509")));
    step("curator creates auth node", () -> c.create().withACL(ZooDefs.Ids.CREATOR_ALL_ACL).forPath("/curator-auth"));
    step("curator getACL auth node", () -> c.getACL().forPath("/curator-auth"));

    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper zk = new ZooKeeper(hosts, 15000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
    }, tls(other, trust, pw));
    step("java api connected (other certificate)", () -> connected.await(20, TimeUnit.SECONDS));
    step("java api reads x509 node", () -> new String(zk.getData("/curator-x509", false, null)));
    step("java api writes auth node", () -> zk.setData("/curator-auth", "x".getBytes(), -1).getVersion());
    step("java api creates its own auth node", () -> zk.create("/java-auth", null, ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT));
    step("java api getACL", () -> zk.getACL("/java-auth", new Stat()));
    step("curator reads java node", () -> new String(c.getData().forPath("/java-auth") == null ? new byte[0] : c.getData().forPath("/java-auth")));
    zk.close();
    c.close();
  }
}
