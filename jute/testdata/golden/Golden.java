// Golden prints, one per line as "name hex", the bytes Apache ZooKeeper's own Java Jute
// code writes for a few records. golden.txt beside it is this program's output; the Go
// test TestGolden compares zkraft's encodings with it byte for byte.
//
// Regenerate (needs a JDK and ZooKeeper's jars, e.g. Debian's zookeeper package):
//
//	cd jute/testdata/golden
//	javac -cp '/usr/share/java/*' -d /tmp/golden Golden.java
//	java -cp "/tmp/golden:/usr/share/java/*" Golden > golden.txt
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.MultiOperationRecord;
import org.apache.zookeeper.MultiResponse;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.ConnectRequest;
import org.apache.zookeeper.proto.ConnectResponse;
import org.apache.zookeeper.proto.CreateRequest;
import org.apache.zookeeper.proto.GetChildrenResponse;
import org.apache.zookeeper.proto.ReplyHeader;
import org.apache.zookeeper.proto.RequestHeader;
import org.apache.zookeeper.proto.SetWatches2;
import org.apache.zookeeper.proto.WatcherEvent;

public class Golden {
    interface Body {
        void write(BinaryOutputArchive a) throws Exception;
    }

    static void emit(String name, Body body) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        body.write(BinaryOutputArchive.getArchive(out));
        StringBuilder sb = new StringBuilder();
        for (byte b : out.toByteArray()) {
            sb.append(String.format("%02x", b));
        }
        System.out.println(name + " " + sb);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static Stat stat() {
        return new Stat(0x100000001L, 0x100000002L, 1700000000000L, 1700000000123L,
            3, 4, 5, 0x0123456789abcdefL, 6, 7, 0x100000003L);
    }

    public static void main(String[] args) throws Exception {
        byte[] passwd = new byte[16];
        for (int i = 0; i < 16; i++) {
            passwd[i] = (byte) (0xf0 + i);
        }
        // What ClientCnxn.SendThread.primeConnection writes: the record, then readOnly.
        ConnectRequest cr = new ConnectRequest(0, 0x200000005L, 30000, 0x0123456789abcdefL, passwd);
        emit("ConnectRequest", a -> cr.serialize(a, "connect"));
        emit("ConnectRequestReadOnly", a -> {
            cr.serialize(a, "connect");
            a.writeBool(true, "readOnly");
        });
        ConnectResponse cresp = new ConnectResponse(0, 4000, 0x0123456789abcdefL, passwd);
        emit("ConnectResponseReadOnly", a -> {
            cresp.serialize(a, "connect");
            a.writeBool(false, "readOnly");
        });

        List<ACL> acl = Arrays.asList(
            new ACL(ZooDefs.Perms.ALL, new Id("world", "anyone")),
            new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.ADMIN, new Id("digest", "bob:XyZ=")));
        CreateRequest create = new CreateRequest("/app/node", bytes("hello"), acl, CreateMode.EPHEMERAL_SEQUENTIAL.toFlag());
        emit("CreateRequestFrame", a -> {
            ByteArrayOutputStream inner = new ByteArrayOutputStream();
            BinaryOutputArchive ia = BinaryOutputArchive.getArchive(inner);
            new RequestHeader(7, ZooDefs.OpCode.create).serialize(ia, "header");
            create.serialize(ia, "request");
            a.writeBuffer(inner.toByteArray(), "frame"); // the client's 4-byte length prefix
        });
        emit("CreateRequestNullData", a -> new CreateRequest("/n", null, acl.subList(0, 1), 0).serialize(a, "r"));
        emit("Stat", a -> stat().serialize(a, "stat"));
        emit("ReplyHeader", a -> new ReplyHeader(-1, 0x300000007L, -101).serialize(a, "h"));
        emit("WatcherEvent", a -> new WatcherEvent(4, 3, "/app").serialize(a, "e"));
        emit("SetWatches2", a -> new SetWatches2(9L, Arrays.asList("/a", "/b"), Arrays.asList(),
            Arrays.asList("/c"), Arrays.asList(), Arrays.asList("/r")).serialize(a, "w"));
        emit("GetChildrenResponse", a -> new GetChildrenResponse(Arrays.asList("x", "yy")).serialize(a, "r"));

        MultiOperationRecord multi = new MultiOperationRecord(Arrays.asList(
            Op.create("/m/a", bytes("a"), acl.subList(0, 1), CreateMode.PERSISTENT),
            Op.create("/m/c", bytes(""), acl.subList(0, 1), CreateMode.CONTAINER),
            Op.create("/m/t", null, acl.subList(0, 1), CreateMode.PERSISTENT_WITH_TTL, 60000L),
            Op.delete("/m/d", 2),
            Op.setData("/m/s", bytes("new"), -1),
            Op.check("/m", 5)));
        emit("MultiRequest", a -> multi.serialize(a, "multi"));
        MultiOperationRecord multiRead = new MultiOperationRecord(Arrays.asList(
            Op.getData("/m/a"), Op.getChildren("/m")));
        emit("MultiReadRequest", a -> multiRead.serialize(a, "multi"));

        MultiResponse resp = new MultiResponse();
        resp.add(new OpResult.CreateResult("/m/a"));
        resp.add(new OpResult.CreateResult("/m/c", stat()));
        resp.add(new OpResult.DeleteResult());
        resp.add(new OpResult.SetDataResult(stat()));
        resp.add(new OpResult.CheckResult());
        resp.add(new OpResult.ErrorResult(-101));
        emit("MultiResponse", a -> resp.serialize(a, "multi"));
        MultiResponse readResp = new MultiResponse();
        readResp.add(new OpResult.GetDataResult(bytes("d"), stat()));
        readResp.add(new OpResult.GetChildrenResult(Arrays.asList("a", "b")));
        readResp.add(new OpResult.ErrorResult(-101));
        emit("MultiReadResponse", a -> readResp.serialize(a, "multi"));
    }
}
