package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/memstore/memstore"
)

// clientMaxExportLine bounds one line of an export: a memory of the
// largest content, each byte escaped as JSON at its longest (\u00XX),
// with room for its other fields.
const clientMaxExportLine = 6*memstore.MaxContentBytes + 64<<10

// exportLineJSON is any line of an export, as the client reads it: the
// fields that the line's type requires are checked present.
type exportLineJSON struct {
	Type          string     `json:"type"`
	ID            *string    `json:"id"`
	Path          *string    `json:"path"`
	Name          string     `json:"name"`
	Description   string     `json:"description"`
	ArchivedAt    *Timestamp `json:"archived_at"`
	Content       *string    `json:"content"`
	ContentSHA256 *string    `json:"content_sha256"`
	ContentSize   *int64     `json:"content_size_bytes"`
	UpdatedAt     *Timestamp `json:"updated_at"`
	MemoryCount   *int64     `json:"memory_count"`
	ErrorCount    *int64     `json:"error_count"`
}

// ExportMemories implements memstore.ExportService (GET
// .../memories/export, view=full when content is set, else basic),
// reading the stream a line at a time. It fails unless the stream ends
// with its complete line, whose counts match the lines before it, and
// nothing after. A memory the server could not serve (a memory_error
// line) is read on its own (GET .../memories/{id}).
//
// A server without the export stream (it answers 404 for the route of a
// store it has) is listed page by page instead: the same memories, but
// not as of one moment, as a list is not.
func (c *Client) ExportMemories(ctx context.Context, caller *memstore.Caller, storeID string, content bool, sink memstore.ExportSink) error {
	p, err := clientStorePath(storeID)
	view := "basic"
	if content {
		view = "full"
	}
	r, err := c.prepare(caller, clientRequest{method: http.MethodGet, path: p + "/memories/export", query: url.Values{"view": {view}}, err: err})
	if err != nil {
		return err
	}
	body, where, err := c.openStream(ctx, r, "application/x-ndjson")
	if errors.Is(err, errStreamNotFound) {
		st, serr := c.Store(ctx, caller, storeID)
		if serr != nil {
			return serr // the store, not the route, is missing
		}
		return c.exportByList(ctx, caller, st, content, sink)
	}
	if err != nil {
		return err
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), clientMaxExportLine)
	var (
		lines, memories, failed int64
		done                    *exportLineJSON
	)
	for sc.Scan() {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		lines++
		if done != nil {
			return fmt.Errorf("%s: the export has a line after its complete line", where)
		}
		var j exportLineJSON
		if err := json.Unmarshal(b, &j); err != nil {
			return fmt.Errorf("%s: line %d of the export is not JSON: %w", where, lines, err)
		}
		if j.Type != exportStore && lines == 1 {
			if !content {
				return fmt.Errorf("%s: the basic export does not begin with its store line", where)
			}
			if err := sink.Store(&memstore.Store{ID: storeID}); err != nil {
				return err
			}
		}
		switch j.Type {
		case exportStore:
			if lines != 1 || j.ID == nil {
				return fmt.Errorf("%s: line %d of the export is a store line out of place or without its id", where, lines)
			}
			st := &memstore.Store{ID: *j.ID, Name: j.Name, Description: j.Description, ArchivedAt: timePtr(j.ArchivedAt)}
			if err := sink.Store(st); err != nil {
				return err
			}
		case exportMemory:
			m, err := j.memory(storeID, content)
			if err != nil {
				return fmt.Errorf("%s: line %d of the export: %w", where, lines, err)
			}
			memories++
			if err := sink.Memory(m); err != nil {
				return err
			}
		case exportMemoryError:
			if j.ID == nil {
				return fmt.Errorf("%s: line %d of the export is a memory_error without the memory's id", where, lines)
			}
			failed++
			m, err := c.Memory(ctx, caller, storeID, *j.ID)
			if err != nil {
				return err
			}
			if !content {
				m.Content = ""
			}
			if err := sink.Memory(m); err != nil {
				return err
			}
		case exportComplete:
			done = &j
		}
		// Lines of other types are for other clients: skipped.
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: the export broke off: %w", where, err)
	}
	switch {
	case done == nil:
		return fmt.Errorf("%s: the export ended before its complete line", where)
	case done.MemoryCount == nil || *done.MemoryCount != memories:
		return fmt.Errorf("%s: the export's complete line does not count the %d memory lines before it", where, memories)
	case done.ErrorCount == nil || *done.ErrorCount != failed:
		return fmt.Errorf("%s: the export's complete line does not count the %d memory_error lines before it", where, failed)
	}
	return nil
}

// memory is the memory of a memory line, which must have every field
// of its view.
func (j *exportLineJSON) memory(storeID string, content bool) (*memstore.Memory, error) {
	if j.ID == nil || j.Path == nil || j.ContentSHA256 == nil {
		return nil, fmt.Errorf("a memory line without its id, path or content_sha256")
	}
	m := &memstore.Memory{ID: *j.ID, StoreID: storeID, Path: *j.Path, ContentSHA256: *j.ContentSHA256}
	if content {
		if j.Content == nil || j.UpdatedAt == nil {
			return nil, fmt.Errorf("a memory line of the full view without its content or updated_at")
		}
		m.Content, m.ContentSize, m.UpdatedAt = *j.Content, int64(len(*j.Content)), time.Time(*j.UpdatedAt)
		return m, nil
	}
	if j.ContentSize == nil {
		return nil, fmt.Errorf("a memory line of the basic view without its content_size_bytes")
	}
	m.ContentSize = *j.ContentSize
	return m, nil
}

// exportByList hands sink the store st and its memories, listed page by
// page (with their content when content is set).
func (c *Client) exportByList(ctx context.Context, caller *memstore.Caller, st *memstore.Store, content bool, sink memstore.ExportSink) error {
	if err := sink.Store(st); err != nil {
		return err
	}
	f := memstore.MemoryFilter{Full: content, Limit: memstore.MaxPageSize} // a full page holds MaxFullPageSize
	for {
		page, err := c.Memories(ctx, caller, st.ID, f)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if it.Memory == nil {
				continue
			}
			if err := sink.Memory(it.Memory); err != nil {
				return err
			}
		}
		if page.Next == "" || page.Next == f.Page {
			return nil
		}
		f.Page = page.Next
	}
}

// errStreamNotFound is what the error of a stream's request that
// answered 404 also is (errors.Is), which its caller may tell apart.
var errStreamNotFound = errors.New("the server has no such stream")

// streamNotFound is that error: it says what the answer said.
type streamNotFound struct{ error }

func (e streamNotFound) Unwrap() error      { return e.error }
func (streamNotFound) Is(target error) bool { return target == errStreamNotFound }

// openStream sends r for a streamed answer of type accept and returns
// its body, and where it came from, when the answer is 200, else the
// error the answer says (wrapping errStreamNotFound for a 404).
func (c *Client) openStream(ctx context.Context, r clientRequest, accept string) (body io.ReadCloser, where string, err error) {
	res, where, err := c.send(ctx, r, accept)
	if err != nil {
		return nil, where, err
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(res.Body, clientMaxEventBytes))
		err := clientError(where, res, data)
		if res.StatusCode == http.StatusNotFound {
			err = streamNotFound{err}
		}
		return nil, where, err
	}
	return res.Body, where, nil
}
