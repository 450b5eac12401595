//go:build !linux

package webhook_test

import (
	"net"
	"testing"
)

// closedPort is a loopback address where nothing listens: the port of a
// listener closed at once. (On Linux a bound socket keeps the port from
// later listeners; see closedport_linux_test.go.)
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
