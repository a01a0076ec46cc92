package session

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

func sampleTable() *Table {
	t := NewTable()
	t.Add(Session{ID: 0x0200000000000002, Password: NewPassword(0x0200000000000002, SuperSecret), Timeout: 30000})
	t.Add(Session{ID: -0x100000000000000, Password: []byte{}, Timeout: 4000})
	t.Add(Session{ID: 0x0100000000000001, Password: nil, Timeout: 40000})
	t.Add(Session{ID: 7, Password: []byte("pw"), Timeout: 1, Owner: "12", Conn: 1 << 60, Seq: 42})
	return t
}

func TestTable(t *testing.T) {
	tab := NewTable()
	pw := []byte("0123456789abcdef")
	if !tab.Add(Session{ID: 5, Password: pw, Timeout: 3000}) {
		t.Fatal("Add of a new id failed")
	}
	if tab.Add(Session{ID: 5, Timeout: 1}) {
		t.Fatal("Add of an existing id succeeded")
	}
	pw[0] = 'X' // the table keeps its own copy
	s, ok := tab.Get(5)
	if !ok || s.Timeout != 3000 || string(s.Password) != "0123456789abcdef" {
		t.Fatalf("Get = %+v, %v", s, ok)
	}
	if !s.CheckPassword([]byte("0123456789abcdef")) || s.CheckPassword(pw) || s.CheckPassword(nil) {
		t.Fatal("CheckPassword")
	}
	if s.TimeoutDuration().Milliseconds() != 3000 {
		t.Fatal("TimeoutDuration")
	}
	tab.Add(Session{ID: -3})
	tab.Add(Session{ID: 1})
	var ids []int64
	for _, s := range tab.All() {
		ids = append(ids, s.ID)
	}
	if !reflect.DeepEqual(ids, []int64{-3, 1, 5}) || tab.Len() != 3 {
		t.Fatalf("All ids = %v, Len = %d", ids, tab.Len())
	}
	if s, ok := tab.Remove(5); !ok || s.ID != 5 {
		t.Fatalf("Remove = %+v, %v", s, ok)
	}
	if _, ok := tab.Remove(5); ok {
		t.Fatal("second Remove succeeded")
	}
	if _, ok := tab.Get(5); ok || tab.Len() != 2 {
		t.Fatal("removed session still there")
	}
	if got := NewTable().All(); got == nil || len(got) != 0 {
		t.Fatalf("empty All = %#v", got)
	}
}

func TestTableSnapshotRoundTrip(t *testing.T) {
	for name, tab := range map[string]*Table{"empty": NewTable(), "sample": sampleTable()} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tab.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			enc := bytes.Clone(buf.Bytes())
			// A snapshot may be one section of a stream: DecodeTable reads only its own bytes.
			buf.WriteString("next section")
			got, err := DecodeTable(iotest.OneByteReader(&buf))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.All(), tab.All()) {
				t.Fatalf("decoded %+v\nwant    %+v", got.All(), tab.All())
			}
			if rest, _ := io.ReadAll(&buf); string(rest) != "next section" {
				t.Fatalf("DecodeTable read into the next section: %q left", rest)
			}
			// Deterministic: encoding the decoded table gives the same bytes.
			var again bytes.Buffer
			if err := got.Encode(&again); err != nil || !bytes.Equal(again.Bytes(), enc) {
				t.Fatalf("re-encoding differs: %v", err)
			}
		})
	}
}

// The format is fixed: this is version 3 of one small table, byte for byte.
func TestTableSnapshotFormat(t *testing.T) {
	tab := NewTable()
	tab.Add(Session{ID: 0x0102030405060708, Password: []byte{0xaa, 0xbb}, Timeout: 30000, Owner: "3", Conn: 9, Seq: 2})
	tab.Add(Session{ID: 1, Timeout: 4000})
	var buf bytes.Buffer
	if err := tab.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	const want = "5a4b7374" + "00000003" + "00000002" +
		"0000000000000001" + "00000fa0" + "ffffffff" + "0000" + "0000000000000000" + "0000000000000000" +
		"0102030405060708" + "00007530" + "00000002" + "aabb" + "0001" + "33" + "0000000000000009" + "0000000000000002"
	got := hex.EncodeToString(buf.Bytes())
	if got[:len(got)-8] != want {
		t.Fatalf("snapshot\n got %s\nwant %s<crc>", got, want)
	}
}

// Version 1 (no owners) still decodes.
func TestTableDecodesVersion1(t *testing.T) {
	body, _ := hex.DecodeString("5a4b7374" + "00000001" + "00000001" +
		"0000000000000007" + "00000fa0" + "00000002" + "aabb")
	sum := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli))
	tab, err := DecodeTable(bytes.NewReader(binary.BigEndian.AppendUint32(body, sum)))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := tab.Get(7); !ok || s.Timeout != 4000 || s.Owner != "" || !bytes.Equal(s.Password, []byte{0xaa, 0xbb}) {
		t.Fatalf("decoded %+v, %v", s, ok)
	}
}

// Version 2 (owners, no write cursor) still decodes.
func TestTableDecodesVersion2(t *testing.T) {
	body, _ := hex.DecodeString("5a4b7374" + "00000002" + "00000001" +
		"0000000000000007" + "00000fa0" + "00000002" + "aabb" + "0001" + "33")
	sum := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli))
	tab, err := DecodeTable(bytes.NewReader(binary.BigEndian.AppendUint32(body, sum)))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := tab.Get(7); !ok || s.Owner != "3" || s.Conn != 0 || s.Seq != 0 {
		t.Fatalf("decoded %+v, %v", s, ok)
	}
}

// A write applies only right after the one before it on its connection, or as the first
// write of a new connection; moving the session starts the cursor afresh.
func TestTableAdvance(t *testing.T) {
	tab := NewTable()
	tab.Add(Session{ID: 5, Owner: "1"})
	steps := []struct {
		conn, seq uint64
		ok        bool
	}{
		{10, 2, false}, // a connection's second write without its first
		{10, 1, true},
		{10, 2, true},
		{10, 2, false}, // the same write twice
		{10, 4, false}, // a gap: write 3 was lost
		{11, 5, false}, // a new connection starts at 1
		{11, 1, true},
		{10, 3, false}, // the old connection's later write is not applied after the new one's
		{11, 2, true},
	}
	for i, st := range steps {
		if got := tab.Advance(5, st.conn, st.seq); got != st.ok {
			t.Fatalf("step %d: Advance(%d, %d) = %v, want %v", i, st.conn, st.seq, got, st.ok)
		}
	}
	if tab.Advance(6, 1, 1) {
		t.Fatal("advanced a session that does not exist")
	}
	tab.SetOwner(5, "2")
	if !tab.Advance(5, 11, 1) {
		t.Fatal("after a move, the new member's connection could not start at 1")
	}
}

func TestTableSetOwner(t *testing.T) {
	tab := NewTable()
	tab.Add(Session{ID: 5, Owner: "1"})
	if !tab.SetOwner(5, "2") || tab.SetOwner(6, "2") {
		t.Fatal("SetOwner reported wrongly")
	}
	if s, _ := tab.Get(5); s.Owner != "2" {
		t.Fatalf("owner %q, want 2", s.Owner)
	}
}

func TestTableSnapshotCorrupt(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleTable().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for i := 0; i < len(good); i++ {
		if _, err := DecodeTable(bytes.NewReader(good[:i])); !errors.Is(err, ErrSnapshot) {
			t.Fatalf("cut at %d: %v, want ErrSnapshot", i, err)
		}
	}
	for i := 0; i < len(good); i++ {
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		if _, err := DecodeTable(bytes.NewReader(bad)); !errors.Is(err, ErrSnapshot) {
			t.Fatalf("bit flip at %d: %v, want ErrSnapshot", i, err)
		}
	}
	// A huge count or password length fails on the bytes that are there, without
	// allocating what it claims.
	huge := append([]byte("ZKst\x00\x00\x00\x01\xff\xff\xff\xff"), make([]byte, 12)...)
	huge = append(huge, 0x7f, 0xff, 0xff, 0xff)
	if _, err := DecodeTable(bytes.NewReader(huge)); !errors.Is(err, ErrSnapshot) {
		t.Fatalf("huge password: %v", err)
	}
	// Unsorted or duplicate ids are refused even with a valid checksum.
	dup := NewTable()
	dup.byID[1] = Session{ID: 1}
	var dbuf bytes.Buffer
	if err := dup.Encode(&dbuf); err != nil {
		t.Fatal(err)
	}
	raw := dbuf.Bytes()
	body := append(bytes.Clone(raw[:len(raw)-4]), raw[12:len(raw)-4]...) // the entry twice
	body[11] = 2
	body = append(body, crcOf(body)...)
	if _, err := DecodeTable(bytes.NewReader(body)); !errors.Is(err, ErrSnapshot) {
		t.Fatalf("duplicate ids: %v", err)
	}
}

func crcOf(b []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}
