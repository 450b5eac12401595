package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestPort: the port is one a listener can then take.
func TestPort(t *testing.T) {
	p, err := Port()
	if err != nil {
		t.Fatal(err)
	}
	if p <= 0 || p > 65535 {
		t.Fatalf("port %d", p)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("the port given is not free: %v", err)
	}
	l.Close()
}
