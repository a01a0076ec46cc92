import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.retry.*;
import org.apache.zookeeper.*;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.*;

/**
 * Curator 5.4 and the ZooKeeper Java API logged in with DIGEST-MD5 from a JAAS file
 * (java.security.auth.login.config), one JAAS section per user. Prints one line per
 * step, the same for any server that behaves as ZooKeeper does.
 */
public class SaslClients {
  static CuratorFramework curator(String hosts, String section) throws Exception {
    ZKClientConfig cfg = new ZKClientConfig();
    cfg.setProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, section);
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(hosts).sessionTimeoutMs(15000)
        .connectionTimeoutMs(10000).retryPolicy(new RetryOneTime(100)).zkClientConfig(cfg).build();
    c.start();
    System.out.println(section + " connected " + c.blockUntilConnected(20, TimeUnit.SECONDS));
    return c;
  }

  static void step(String name, Callable<Object> f) {
    try {
      System.out.println(name + ": " + f.call());
    } catch (KeeperException e) {
      System.out.println(name + ": " + e.code());
    } catch (Exception e) {
      System.out.println(name + ": " + e.getClass().getSimpleName());
    }
  }

  public static void main(String[] args) throws Exception {
    String hosts = args[0];
    CuratorFramework bob = curator(hosts, "Client");
    List<ACL> bobOnly = List.of(new ACL(ZooDefs.Perms.ALL, new Id("sasl", "bob")));
    step("bob create", () -> bob.create().withACL(bobOnly).forPath("/cur", "v".getBytes()));
    step("bob get", () -> new String(bob.getData().forPath("/cur")));
    step("bob acl", () -> bob.getACL().forPath("/cur"));
    step("bob auth acl", () -> bob.create().withACL(ZooDefs.Ids.CREATOR_ALL_ACL).forPath("/cur/mine"));
    step("bob auth acl is", () -> bob.getACL().forPath("/cur/mine"));

    CuratorFramework alice = curator(hosts, "ClientAlice");
    step("alice get", () -> new String(alice.getData().forPath("/cur")));
    step("alice set", () -> alice.setData().forPath("/cur", "w".getBytes()));

    // The plain Java API, with a watcher that records the authentication events.
    ZKClientConfig cfg = new ZKClientConfig();
    cfg.setProperty(ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, "ClientWrong");
    BlockingQueue<String> events = new LinkedBlockingQueue<>();
    ZooKeeper wrong = new ZooKeeper(hosts, 15000, e -> events.add(e.getState().toString()), cfg);
    for (String e; (e = events.poll(20, TimeUnit.SECONDS)) != null; ) {
      System.out.println("wrong password event: " + e);
      if (e.equals("AuthFailed")) break;
    }
    step("wrong password get", () -> new String(wrong.getData("/cur", false, null)));
    step("wrong password state", () -> wrong.getState());
    wrong.close();

    step("bob still get", () -> new String(bob.getData().forPath("/cur")));
    bob.close();
    alice.close();
  }
}
