// Oracle prints session ids and passwords as Apache ZooKeeper computes them, for
// oracle.txt, which the Go tests compare against. It lives in ZooKeeper's server package
// so it can call ZooKeeperServer.generatePasswd (package-private) itself.
//
// Regenerate (needs a JDK and ZooKeeper's jars, e.g. Debian's zookeeper package):
//
//	cd session/testdata
//	javac -cp '/usr/share/java/*' -d /tmp/oracle Oracle.java
//	java -cp "/tmp/oracle:/usr/share/java/*" org.apache.zookeeper.server.Oracle > oracle.txt
package org.apache.zookeeper.server;

public class Oracle {
    public static void main(String[] args) {
        ZooKeeperServer zks = new ZooKeeperServer();
        long[] ids = {0L, 1L, 0x0123456789abcdefL, 0x018bcfe568000000L, -1L, Long.MIN_VALUE, 0xB3415C00L};
        for (long id : ids) {
            StringBuilder sb = new StringBuilder();
            for (byte b : zks.generatePasswd(id)) {
                sb.append(String.format("%02x", b));
            }
            System.out.println("passwd " + id + " " + sb);
        }
        // SessionTrackerImpl.initializeNextSessionId reads the wall clock; this is its
        // expression with the time as a parameter.
        long[] times = {0L, 1L, 1700000000000L, 1099511627775L, 1099511627776L, 0x7fffffffffffL};
        long[] sids = {0L, 1L, 7L, 254L};
        for (long ms : times) {
            for (long sid : sids) {
                long next = ((ms << 24) >>> 8) | (sid << 56);
                System.out.println("id " + sid + " " + ms + " " + next);
            }
        }
    }
}
