package console

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/transfer"
)

// maxImportBytes bounds the file an import reads (the server's own limit
// on a request's body, --max-body-bytes, may be lower), so that an import
// holds a bounded amount in memory.
const maxImportBytes = 32 << 20

// exportPageSize is how many memories, with their content, an export
// reads at a time: the most a full page may hold.
const exportPageSize = 20

// The formats of an export, by the query's format.
var exportFormats = map[string]struct{ ext, contentType string }{
	"jsonl": {".jsonl", "application/jsonl; charset=utf-8"},
	"zip":   {".zip", "application/zip"},
}

// transferPage offers a store's export and import.
func (h *Handler) transferPage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	st, err := h.cfg.Stores.Store(r.Context(), s.caller, r.PathValue("store"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "transfer", s, view{Title: "Export and import " + st.Name, Data: transferData(st)})
}

// transferData is what the export and import page shows of a store and
// of the import's limits.
func transferData(st *memstore.Store) map[string]any {
	return map[string]any{"Store": st, "Max": maxImportBytes >> 20, "MaxEntries": transfer.MaxEntries}
}

// memoryWriter is how an export writes a memory.
type memoryWriter interface {
	Write(m *memstore.Memory) error
}

// export sends every memory of a store as a download: JSON lines or a
// zip of files. It reads the store a page at a time, so its memory stays
// bounded; a failure part way is logged and aborts the response, so that
// the browser reports a failed download rather than keep a file that
// looks complete.
func (h *Handler) export(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	format, ok := exportFormats[r.URL.Query().Get("format")]
	if !ok {
		h.fail(w, r, s, http.StatusBadRequest, "Choose an export format: jsonl or zip.")
		return
	}
	st, err := h.cfg.Stores.Store(ctx, s.caller, r.PathValue("store"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	// Reading the first page before answering lets a refusal be a page.
	f := memstore.MemoryFilter{Full: true, Limit: exportPageSize}
	p, err := h.cfg.Memories.Memories(ctx, s.caller, st.ID, f)
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	name := memstore.Slug(st.Name)
	if name == "" {
		name = st.ID
	}
	w.Header().Set("Content-Type", format.contentType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+format.ext+`"`)
	var mw memoryWriter
	finish := func() error { return nil }
	if format.ext == ".zip" {
		zw := transfer.NewZipWriter(w)
		mw, finish = zw, zw.Close
	} else {
		mw = transfer.NewLineWriter(w)
	}
	for {
		for _, it := range p.Items {
			if it.Memory == nil {
				continue
			}
			if err := mw.Write(it.Memory); err != nil {
				return // the download was cut off
			}
		}
		if p.Next == "" {
			break
		}
		f.Page = p.Next
		if p, err = h.cfg.Memories.Memories(ctx, s.caller, st.ID, f); err != nil {
			h.internal(r, err)
			panic(http.ErrAbortHandler)
		}
	}
	if err := finish(); err != nil {
		h.internal(r, err)
		panic(http.ErrAbortHandler)
	}
}

// importRow is what an import did with one entry of its file.
type importRow struct {
	Where, Path, Result string
	OK                  bool
}

// importMemories creates a memory for each entry of an uploaded file, JSON
// lines or a zip, through the core: an entry whose path is taken, or
// that the core refuses otherwise, is reported with the reason and
// changes nothing; the others are created. A caller the core does not let
// write to the store is refused with the core's reason, and nothing is
// created.
func (h *Handler) importMemories(w http.ResponseWriter, r *http.Request, s *signedIn) {
	ctx := r.Context()
	st, err := h.cfg.Stores.Store(ctx, s.caller, r.PathValue("store"))
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	data := transferData(st)
	refuse := func(msg string) {
		h.render(w, r, http.StatusBadRequest, "transfer", s, view{Title: "Export and import " + st.Name, Error: msg, Data: data})
	}
	file, hdr, err := r.FormFile("file")
	if err != nil {
		refuse("Choose a file to import: a .jsonl export or a .zip of files.")
		return
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxImportBytes+1))
	if err != nil {
		h.fail(w, r, s, http.StatusInternalServerError, h.internal(r, err))
		return
	}
	if len(b) > maxImportBytes {
		refuse(fmt.Sprintf("The file is over %d MiB, the most an import reads; nothing was imported.", maxImportBytes>>20))
		return
	}
	var rows []importRow
	var fatal error
	create := func(where, path, content string) {
		if fatal != nil {
			return
		}
		_, err := h.cfg.Memories.CreateMemory(ctx, s.caller, st.ID, memstore.MemoryCreate{Path: path, Content: content})
		switch {
		case err == nil:
			rows = append(rows, importRow{Where: where, Path: path, Result: "created", OK: true})
		case memstore.ErrorCode(err) == memstore.EInternal, memstore.ErrorCode(err) == memstore.EPermission:
			// The core refuses a caller who may not write to the store
			// every entry alike: the import stops at the first.
			fatal = err
		default:
			rows = append(rows, importRow{Where: where, Path: path, Result: memstore.ErrorMessage(err)})
		}
	}
	if strings.HasSuffix(strings.ToLower(hdr.Filename), ".zip") {
		err = transfer.ReadZip(bytes.NewReader(b), int64(len(b)), func(f transfer.ZipFile) error {
			switch {
			case f.Skip != "":
				rows = append(rows, importRow{Where: f.Name, Path: f.Path, Result: "skipped: " + f.Skip})
			case f.Fail != "":
				rows = append(rows, importRow{Where: f.Name, Path: f.Path, Result: f.Fail})
			default:
				create(f.Name, f.Path, f.Content)
			}
			return fatal
		})
		if err != nil && fatal == nil {
			refuse("The file could not be read: " + err.Error() + "; nothing was imported.")
			return
		}
	} else {
		lines := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			lines++ // the last line, without its newline
		}
		if lines > transfer.MaxEntries {
			refuse(fmt.Sprintf("The file has more than %d lines, the most an import reads; nothing was imported.", transfer.MaxEntries))
			return
		}
		br := bufio.NewReader(bytes.NewReader(b))
		for n := 1; fatal == nil; n++ {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				where := fmt.Sprintf("line %d", n)
				if path, content, perr := transfer.ParseLine(line); perr != nil {
					rows = append(rows, importRow{Where: where, Result: perr.Error()})
				} else {
					create(where, path, content)
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
		}
	}
	if fatal != nil {
		h.failErr(w, r, s, fatal)
		return
	}
	created := 0
	for _, row := range rows {
		if row.OK {
			created++
		}
	}
	data["Rows"], data["Created"], data["NotCreated"] = rows, created, len(rows)-created
	h.render(w, r, http.StatusOK, "transfer", s, view{Title: "Export and import " + st.Name, Data: data,
		Notice: fmt.Sprintf("Imported %s: %d created, %d not.", hdr.Filename, created, len(rows)-created)})
}

// capBody bounds a request's body before anything reads it (the import's
// route allows its file and a megabyte for the rest of the form).
func capBody(n int64, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		next(w, r)
	}
}
