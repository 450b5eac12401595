package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/memstore/memstore/internal/lines"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTimeout bounds the wait, once the input has ended, for the answers
// to the requests already read: a tool call takes well under it.
const drainTimeout = time.Minute

// Stdio serves srv to one client over newline-delimited JSON-RPC, as MCP's
// stdio transport does, reading in and writing out (standard input and
// output), until in ends or ctx is done.
//
// The SDK's transport ends the session on the first line it cannot
// decode, and drops the requests in progress when its input ends. Here a
// line that is not a JSON-RPC message gets an error answer (parse error,
// -32700, for one that is not JSON; invalid request, -32600, otherwise)
// and the session goes on; batches, which MCP no longer has, are refused
// the same way. At the end of the input, every request read is answered
// before Stdio returns.
func Stdio(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer) error {
	s := &stdio{out: out, pending: map[jsonrpc.ID]bool{}}
	s.changed = sync.NewCond(&s.mu)
	pr, pw := io.Pipe()
	go s.read(in, pw)
	err := srv.Run(ctx, &mcp.IOTransport{Reader: pr, Writer: s, MaxLineLength: -1}) // lines are bounded here
	pr.Close()                                                                      // if the session ended first, the reader's writes fail
	s.mu.Lock()
	s.stopped = true
	s.changed.Broadcast()
	s.mu.Unlock()
	return err
}

// stdio sits between the client and the SDK's transport: it passes the
// well-formed messages to the SDK, answers the others itself, and keeps
// count of the requests not yet answered.
type stdio struct {
	mu      sync.Mutex // guards out and the fields below
	out     io.Writer
	pending map[jsonrpc.ID]bool // IDs of the requests read and not answered
	changed *sync.Cond          // on mu: an answer was written, or the session stopped
	stopped bool
}

// read passes the lines of in to w until in ends, then waits for the
// answers to the requests read and closes w: the SDK then ends the
// session.
func (s *stdio) read(in io.Reader, w *io.PipeWriter) {
	defer w.Close()
	r := bufio.NewReader(in)
	for {
		line, tooLong, err := lines.Read(r, lines.Max)
		if werr := s.pass(line, tooLong, w); werr != nil {
			return // the session has ended
		}
		if err != nil {
			break
		}
	}
	timeout := time.AfterFunc(drainTimeout, func() {
		s.mu.Lock()
		s.stopped = true
		s.changed.Broadcast()
		s.mu.Unlock()
	})
	defer timeout.Stop()
	s.mu.Lock()
	for len(s.pending) > 0 && !s.stopped {
		s.changed.Wait()
	}
	s.mu.Unlock()
}

// pass sends a well-formed message to the SDK through w, or answers a
// malformed one; blank lines are skipped. Its error is w's.
func (s *stdio) pass(line []byte, tooLong bool, w io.Writer) error {
	line = bytes.TrimSpace(line)
	var refusal []byte
	switch {
	case tooLong:
		refusal = errorMessage(jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message is longer than %d bytes, the limit", lines.Max))
	case len(line) == 0:
		return nil
	case !json.Valid(line):
		refusal = errorMessage(jsonrpc.CodeParseError, "parse error: the line is not a JSON value; send one JSON-RPC message per line")
	case line[0] == '[':
		refusal = errorMessage(jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported: send one message per line")
	}
	if refusal == nil {
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			refusal = errorMessage(jsonrpc.CodeInvalidRequest, "not a JSON-RPC 2.0 message: "+err.Error())
		} else if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			s.mu.Lock()
			if s.pending[req.ID] {
				// The SDK would drop it unanswered.
				refusal = errorMessage(jsonrpc.CodeInvalidRequest, fmt.Sprintf("request id %v is already that of a request in progress", req.ID.Raw()))
			}
			s.pending[req.ID] = true
			s.mu.Unlock()
		}
	}
	if refusal != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		_, err := s.out.Write(refusal)
		return err
	}
	_, err := w.Write(append(line, '\n'))
	return err
}

// Write writes a message of the SDK's (one per call, with its newline) and
// counts an answer as such.
func (s *stdio) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.out.Write(p)
	if msg, derr := jsonrpc.DecodeMessage(p); derr == nil {
		if resp, ok := msg.(*jsonrpc.Response); ok && s.pending[resp.ID] {
			delete(s.pending, resp.ID)
			s.changed.Broadcast()
		}
	}
	return n, err
}

// Close leaves out open: it is the process's.
func (s *stdio) Close() error { return nil }
