package postgres_test

import (
	"bytes"
	"testing"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/pgtest"
	"github.com/memstore/memstore/postgres"
)

// TestVacuumFullLeavesNoText deletes a store whose memory holds a word
// found nowhere else, vacuums in full, and reads the files of every table
// and index of the database: none may still hold the word. A table that
// holds content or words of it (the search postings, the vectors, a
// session's transcript) and is left out of the vacuum keeps its dead rows
// in its file.
func TestVacuumFullLeavesNoText(t *testing.T) {
	ctx := t.Context()
	url := pgtest.DB(t, migrate)
	db := mustOpenAt(t, url, postgres.Options{})
	core := memstore.NewCore(db)
	conn := connect(t, url)
	const word = "quixotrombulance"
	s, err := core.CreateStore(ctx, alice, memstore.StoreCreate{Name: "erased"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.CreateMemory(ctx, alice, s.ID, memstore.MemoryCreate{Path: "/" + word + ".md", Content: "the " + word + " of the night"}); err != nil {
		t.Fatal(err)
	}
	// Its search data made, then queued for deletion with the store.
	db.StopIndexer()
	if err := db.IndexQueued(ctx); err != nil {
		t.Fatal(err)
	}
	if err := core.DeleteStore(ctx, alice, s.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.Vacuum(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT c.relname, pg_relation_filepath(c.oid) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i', 't') AND pg_relation_filepath(c.oid) IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for rows.Next() {
		var name, file string
		if err := rows.Scan(&name, &file); err != nil {
			t.Fatal(err)
		}
		files[name] = file
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if files["search_postings"] == "" || files["memories"] == "" || files["memory_search"] == "" {
		t.Fatalf("the tables' files not found: %v", files)
	}
	for name, file := range files {
		var data []byte
		if err := conn.QueryRow(ctx, `SELECT pg_read_binary_file($1)`, file).Scan(&data); err != nil {
			t.Fatalf("read %s's file: %v", name, err)
		}
		// The search postings hold the word's stem.
		if bytes.Contains(data, []byte(word[:10])) {
			t.Errorf("%s still holds the deleted store's word after a full vacuum", name)
		}
	}
}
