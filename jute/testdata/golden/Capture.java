// Capture runs Apache ZooKeeper's server and Java client in one process, with a proxy
// between them, drives one session through most of the client API, and prints every
// byte each side sent, as "client hex" and "server hex" lines (session.txt). The Go tests
// decode both streams frame by frame and use the client's as fuzz seeds.
//
// Regenerate (needs a JDK and ZooKeeper's jars, e.g. Debian's zookeeper package):
//
//	cd jute/testdata/golden
//	javac -cp '/usr/share/java/*' -d /tmp/golden Capture.java
//	java -cp "/tmp/golden:/usr/share/java/*" Capture > session.txt
//
// Session ids, passwords and times differ from run to run; the tests do not depend on them.
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

public class Capture {
    static Thread pipe(InputStream in, OutputStream out, ByteArrayOutputStream rec) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[4096];
            try {
                for (int n; (n = in.read(buf)) > 0; ) {
                    synchronized (rec) {
                        rec.write(buf, 0, n);
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (Exception e) {
                // the other side closed
            }
            try {
                out.close();
            } catch (Exception e) {
                // already closed
            }
        });
        t.start();
        return t;
    }

    static String hex(ByteArrayOutputStream rec) {
        StringBuilder sb = new StringBuilder();
        synchronized (rec) {
            for (byte b : rec.toByteArray()) {
                sb.append(String.format("%02x", b));
            }
        }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("zookeeper.extendedTypesEnabled", "true");
        System.setProperty("zookeeper.sasl.client", "false");
        System.setProperty("zookeeper.admin.enableServer", "false");
        java.io.File dir = Files.createTempDirectory("zkcapture").toFile();
        ZooKeeperServer zks = new ZooKeeperServer(dir, dir, 2000);
        ServerCnxnFactory factory = ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", 0), 10);
        factory.startup(zks);

        ServerSocket proxy = new ServerSocket(0);
        ByteArrayOutputStream fromClient = new ByteArrayOutputStream();
        ByteArrayOutputStream fromServer = new ByteArrayOutputStream();
        Thread[] pipes = new Thread[2];
        Thread acceptor = new Thread(() -> {
            try {
                Socket c = proxy.accept();
                Socket s = new Socket("127.0.0.1", factory.getLocalPort());
                pipes[0] = pipe(c.getInputStream(), s.getOutputStream(), fromClient);
                pipes[1] = pipe(s.getInputStream(), c.getOutputStream(), fromServer);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        acceptor.start();

        CountDownLatch connected = new CountDownLatch(1);
        Watcher w = e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        };
        ZooKeeper zk = new ZooKeeper("127.0.0.1:" + proxy.getLocalPort(), 4000, w);
        connected.await(10, TimeUnit.SECONDS);
        byte[] data = "hello".getBytes(StandardCharsets.UTF_8);

        zk.addAuthInfo("digest", "bob:secret".getBytes(StandardCharsets.UTF_8));
        zk.create("/app", data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create("/app/e-", data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL, new Stat());
        zk.create("/app/c", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER);
        zk.create("/app/t", data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_WITH_TTL, new Stat(), 60000);
        zk.exists("/app", true);
        zk.exists("/missing", true);
        zk.getData("/app", true, new Stat());
        zk.getChildren("/app", true);
        zk.getChildren("/app", false, new Stat());
        zk.setData("/app", "x".getBytes(StandardCharsets.UTF_8), -1);
        zk.getACL("/app", new Stat());
        zk.setACL("/app", ZooDefs.Ids.OPEN_ACL_UNSAFE, -1);
        CountDownLatch synced = new CountDownLatch(1);
        zk.sync("/app", (rc, path, ctx) -> synced.countDown(), null);
        synced.await(10, TimeUnit.SECONDS);
        zk.getAllChildrenNumber("/app");
        zk.getEphemerals("/app");
        zk.addWatch("/app", AddWatchMode.PERSISTENT_RECURSIVE);
        zk.removeAllWatches("/app", Watcher.WatcherType.Any, false);
        zk.multi(Arrays.asList(
            Op.create("/app/m", data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
            Op.setData("/app/m", data, 0),
            Op.check("/app", -1),
            Op.delete("/app/m", -1)));
        try {
            zk.multi(Arrays.asList(Op.check("/app", 99), Op.delete("/missing", -1)));
        } catch (Exception e) {
            // the error result is what we want on the wire
        }
        zk.multi(Arrays.asList(Op.getData("/app"), Op.getChildren("/app"), Op.getData("/missing")));
        try {
            zk.delete("/missing", -1);
        } catch (Exception e) {
            // NoNode on the wire
        }
        zk.whoAmI();
        Thread.sleep(1700); // idle long enough for a ping
        zk.close();
        for (Thread t : pipes) {
            t.join(5000);
        }
        factory.shutdown();
        zks.shutdown();
        System.out.println("client " + hex(fromClient));
        System.out.println("server " + hex(fromServer));
    }
}
