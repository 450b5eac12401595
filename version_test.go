package memstore_test

import (
	"testing"
	"time"

	"github.com/memstore/memstore"
)

func TestNewVersion(t *testing.T) {
	now := time.Unix(1700000000, 5).UTC()
	by := memstore.Actor{Type: memstore.ActorAPIKey, ID: "apikey_1"}
	m := &memstore.Memory{ID: "mem_1", StoreID: "memstore_1", Path: "/a.md", Content: "hi", ContentSHA256: "8f43", ContentSize: 2}
	for _, op := range []memstore.Operation{memstore.OpCreated, memstore.OpModified, memstore.OpDeleted} {
		v := memstore.NewVersion("memver_1", m, op, by, now)
		want := memstore.Version{
			ID: "memver_1", StoreID: "memstore_1", MemoryID: "mem_1", Operation: op, Path: "/a.md",
			Content: "hi", ContentSHA256: "8f43", ContentSize: 2, HasContent: op != memstore.OpDeleted,
			CreatedAt: now, CreatedBy: by,
		}
		if *v != want {
			t.Errorf("%s: %+v; want %+v", op, *v, want)
		}
	}
}
