package main

import (
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
)

// Untimed multis stay under jute.maxbuffer whatever --value-size is: with 256 KiB values
// a multi of 100 creates (25 MiB) was refused by both servers, so no cell ran.
func TestBulkBatchesStayUnderTheFrameLimit(t *testing.T) {
	for _, size := range []int{0, 100, 16 << 10, 256 << 10, 2 << 20} {
		value := make([]byte, size)
		n := batchFor(value)
		if n < 1 || n > bulkBatch || (n > 1 && n*size > bulkBytes) {
			t.Errorf("batchFor(%d bytes) = %d", size, n)
		}
		ops := make([]any, 250)
		for i := range ops {
			ops[i] = &zk.CreateRequest{Data: value}
		}
		var (
			mu    sync.Mutex
			count int
		)
		batches := bulkWith([]*zk.Conn{nil}, ops, func(_ *zk.Conn, batch []any) {
			bytes := 0
			for _, op := range batch {
				bytes += len(op.(*zk.CreateRequest).Data)
			}
			if len(batch) < 1 || len(batch) > bulkBatch || (len(batch) > 1 && bytes > bulkBytes) {
				t.Errorf("%d-byte values: a batch of %d ops, %d bytes", size, len(batch), bytes)
			}
			mu.Lock()
			count += len(batch)
			mu.Unlock()
		})
		if count != len(ops) || batches < 1 {
			t.Errorf("%d-byte values: %d of %d ops in %d batches", size, count, len(ops), batches)
		}
	}
}
