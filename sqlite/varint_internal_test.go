package sqlite

import (
	"bytes"
	"testing"
)

// TestFTSVarint: the varints of FTS5's records, as SQLite writes them,
// read back to what was written, and known encodings.
func TestFTSVarint(t *testing.T) {
	for v, want := range map[int64][]byte{0: {0}, 1: {1}, 127: {0x7f}, 128: {0x81, 0x00}, 757: {0x85, 0x75}} {
		if got := ftsVarint(v); !bytes.Equal(got, want) {
			t.Errorf("ftsVarint(%d) = %x, want %x", v, got, want)
		}
	}
	vals := []int64{0, 1, 127, 128, 16383, 16384, 1 << 31, 1<<56 - 1, 1 << 56, 1<<63 - 1}
	var b []byte
	for _, v := range vals {
		b = append(b, ftsVarint(v)...)
	}
	got := addVarints(nil, b)
	if len(got) != len(vals) {
		t.Fatalf("read %d varints, want %d", len(got), len(vals))
	}
	for i, v := range vals {
		if got[i] != v {
			t.Errorf("varint %d read %d, want %d", i, got[i], v)
		}
	}
	if sums := addVarints([]int64{1, 2}, []byte{3, 4, 5}); len(sums) != 3 || sums[0] != 4 || sums[1] != 6 || sums[2] != 5 {
		t.Errorf("addVarints = %v, want [4 6 5]", sums)
	}
}
