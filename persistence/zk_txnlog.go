package persistence

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"os"

	"github.com/zkraft/zkraft/jute"
)

// zkTxnHeader is ZooKeeper's TxnHeader.
type zkTxnHeader struct {
	clientID int64
	cxid     int32
	zxid     int64
	time     int64
	typ      int32
}

// zkTxnEntry is one log record: the header and the undecoded record after it (which
// may end with a TxnDigest).
type zkTxnEntry struct {
	hdr  zkTxnHeader
	body []byte
}

// readZKTxnLog reads one log file and calls fn for every complete entry, as
// FileTxnLog.FileTxnIterator does: an entry of length 0 (preallocation) or a partial
// last record ends the file; a bad magic or checksum is an error. Errors name the file.
func readZKTxnLog(path string, fn func(*zkTxnEntry) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<16)
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("%s: truncated file header", path)
	}
	if magic := int32(binary.BigEndian.Uint32(hdr[0:])); magic != zkLogMagic {
		return fmt.Errorf("%s: bad magic %#08x, want %#08x (\"ZKLG\")", path, uint32(magic), uint32(zkLogMagic))
	}
	if v := int32(binary.BigEndian.Uint32(hdr[4:])); v != zkVersion {
		return fmt.Errorf("%s: log version %d, want %d", path, v, zkVersion)
	}
	off := int64(len(hdr))
	for {
		var pre [12]byte
		if _, err := io.ReadFull(r, pre[:]); err != nil {
			return nil // end of file, possibly mid-record
		}
		crc := int64(binary.BigEndian.Uint64(pre[0:]))
		n := int32(binary.BigEndian.Uint32(pre[8:]))
		if n == 0 {
			return nil // preallocated zeros
		}
		if n < 0 || int64(n) > fi.Size()-off {
			if n == -1 {
				return nil // readBuffer gives null, readTxnBytes sees EOF
			}
			return fmt.Errorf("%s: at byte %d: entry length %d", path, off, n)
		}
		buf := make([]byte, n+1)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil // partial last record
		}
		if buf[n] != 'B' {
			return nil // "Last transaction was partial."
		}
		buf = buf[:n]
		if got := int64(adler32.Checksum(buf)); got != crc {
			return fmt.Errorf("%s: at byte %d: checksum mismatch: stored %#x, computed %#x", path, off, crc, got)
		}
		d := jute.NewDecoder(buf)
		e := &zkTxnEntry{}
		e.hdr.clientID, e.hdr.cxid, e.hdr.zxid = d.Long(), d.Int(), d.Long()
		e.hdr.time, e.hdr.typ = d.Long(), d.Int()
		if d.Err != nil {
			return fmt.Errorf("%s: at byte %d: txn header: %v", path, off, d.Err)
		}
		e.body = buf[len(buf)-d.Remaining():]
		if err := fn(e); err != nil {
			return fmt.Errorf("%s: at byte %d: %w", path, off, err)
		}
		off += 12 + int64(n) + 1
	}
}

// Op codes that appear only in transaction logs.
const zkOpCheck = jute.OpCheck

func zkDecodeACL(d *jute.Decoder) []jute.ACL {
	n := d.VectorLen(12)
	if n < 0 {
		return nil
	}
	acl := make([]jute.ACL, n)
	for i := range acl {
		acl[i].Decode(d)
	}
	return acl
}

// apply is FileTxnSnapLog.processTransaction with DataTree.processTxn. As in
// ZooKeeper, an operation that does not fit the tree (a fuzzy snapshot already holds
// it) is skipped; only an entry that cannot be decoded is an error.
func (t *zkTree) apply(e *zkTxnEntry) error {
	d := jute.NewDecoder(e.body)
	switch e.hdr.typ {
	case jute.OpCreateSession:
		to := d.Int()
		if d.Err != nil {
			return fmt.Errorf("createSession: %v", d.Err)
		}
		t.sessions[e.hdr.clientID] = to
		return nil
	case jute.OpCloseSession:
		delete(t.sessions, e.hdr.clientID)
		// CloseSessionTxn (3.6+) lists the paths; older logs have none. Then every
		// remaining ephemeral of the session goes too (DataTree.killSession).
		if n := d.VectorLen(4); d.Err == nil {
			for i := 0; i < n; i++ {
				p := d.String()
				if d.Err == nil {
					t.deleteNode(p, e.hdr.zxid)
				}
			}
		}
		for p := range t.ephemerals[e.hdr.clientID] {
			t.deleteNode(p, e.hdr.zxid)
		}
		return nil
	case jute.OpMulti:
		n := d.VectorLen(8)
		type sub struct {
			typ  int32
			data []byte
		}
		subs := make([]sub, 0, max(n, 0))
		for i := 0; i < n && d.Err == nil; i++ {
			subs = append(subs, sub{d.Int(), d.Buffer()})
		}
		if d.Err != nil {
			return fmt.Errorf("multi: %v", d.Err)
		}
		for _, s := range subs {
			if s.typ == jute.OpError {
				return nil // a failed multi changes nothing
			}
		}
		for _, s := range subs {
			switch s.typ {
			case jute.OpCreate, jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer,
				jute.OpDelete, jute.OpDeleteContainer, jute.OpSetData, zkOpCheck:
			default:
				return fmt.Errorf("multi: invalid op type %d", s.typ)
			}
			if err := t.applyOp(e.hdr, s.typ, jute.NewDecoder(s.data), true); err != nil {
				return fmt.Errorf("multi: %w", err)
			}
		}
		return nil
	}
	return t.applyOp(e.hdr, e.hdr.typ, d, false)
}

var errZKNodeExists = errors.New("node exists")

func (t *zkTree) applyOp(h zkTxnHeader, typ int32, d *jute.Decoder, inMulti bool) error {
	switch typ {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer:
		path, data, acl := d.String(), d.Buffer(), zkDecodeACL(d)
		var owner int64
		var parentCV int32
		switch typ {
		case jute.OpCreateTTL:
			parentCV = d.Int()
			owner = zkExtendedMask | d.Long() // EphemeralType.TTL.toEphemeralOwner
		case jute.OpCreateContainer:
			parentCV = d.Int()
			owner = zkContainerOwner
		default:
			if d.Bool() {
				owner = h.clientID
			}
			parentCV = d.Int()
		}
		if d.Err != nil {
			return fmt.Errorf("create (type %d): %v", typ, d.Err)
		}
		err := t.createNode(path, data, acl, owner, parentCV, h.zxid, h.time)
		if err == errZKNodeExists && typ == jute.OpCreate && !inMulti {
			// processTxn's fixup for a create already in a fuzzy snapshot.
			if parent, _, ok := zkParent(path); ok {
				t.setCversionPzxid(parent, parentCV, h.zxid)
			}
		}
		return nil
	case jute.OpDelete, jute.OpDeleteContainer:
		path := d.String()
		if d.Err != nil {
			return fmt.Errorf("delete: %v", d.Err)
		}
		t.deleteNode(path, h.zxid)
		return nil
	case jute.OpSetData, jute.OpReconfig:
		path, data, version := d.String(), d.Buffer(), d.Int()
		if d.Err != nil {
			return fmt.Errorf("setData: %v", d.Err)
		}
		if n := t.nodes[zkPath(path)]; n != nil {
			n.Data, n.Mtime, n.Mzxid, n.Version = data, h.time, h.zxid, version
		}
		return nil
	case jute.OpSetACL:
		path, acl, version := d.String(), zkDecodeACL(d), d.Int()
		if d.Err != nil {
			return fmt.Errorf("setACL: %v", d.Err)
		}
		if acl == nil {
			acl = zkCloneACL(zkOpenACL) // convertAcls(null)
		}
		if n := t.nodes[zkPath(path)]; n != nil {
			n.Aversion, n.ACL = version, acl
		}
		return nil
	case zkOpCheck, jute.OpError:
		return nil
	}
	return fmt.Errorf("unsupported txn type %d", typ)
}

// zkPath maps ZooKeeper's path to ours: the root is "" there as well as "/".
func zkPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// zkParent splits path at its last '/', as DataTree does ("/a" has parent "").
func zkParent(path string) (parent, name string, ok bool) {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return zkPath(path[:i]), path[i+1:], true
		}
	}
	return "", "", false
}

// createNode is DataTree.createNode.
func (t *zkTree) createNode(path string, data []byte, acl []jute.ACL, owner int64, parentCV int32, zxid, time int64) error {
	parentPath, name, ok := zkParent(path)
	if !ok || name == "" {
		return nil
	}
	parent := t.nodes[parentPath]
	if parent == nil {
		return nil // NoNode
	}
	if t.nodes[path] != nil {
		return errZKNodeExists
	}
	if acl == nil {
		acl = zkCloneACL(zkOpenACL)
	}
	if parentCV == -1 {
		parentCV = parent.Cversion + 1
	}
	if parentCV > parent.Cversion {
		parent.Cversion = parentCV
		parent.Pzxid = zxid
	}
	return t.add(&ZKNode{Path: path, Data: data, ACL: acl, Czxid: zxid, Mzxid: zxid, Pzxid: zxid,
		Ctime: time, Mtime: time, EphemeralOwner: owner})
}

// deleteNode is DataTree.deleteNode: the parent's pzxid moves forward only.
func (t *zkTree) deleteNode(path string, zxid int64) {
	parentPath, _, ok := zkParent(path)
	if !ok {
		return
	}
	parent := t.nodes[parentPath]
	if parent == nil {
		return
	}
	if zxid > parent.Pzxid {
		parent.Pzxid = zxid
	}
	if path != "/" {
		t.remove(path)
	}
}

// setCversionPzxid is DataTree.setCversionPzxid.
func (t *zkTree) setCversionPzxid(path string, cv int32, zxid int64) {
	n := t.nodes[path]
	if n == nil {
		return
	}
	if cv == -1 {
		cv = n.Cversion + 1
	}
	if cv > n.Cversion {
		n.Cversion, n.Pzxid = cv, zxid
	}
}
