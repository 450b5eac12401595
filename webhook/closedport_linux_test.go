package webhook_test

import (
	"fmt"
	"net"
	"syscall"
	"testing"
)

// closedPort is a loopback address where connections are refused for
// the rest of the test: a socket bound to its port, and never listening,
// keeps any later listener from being given the port, which a closed
// listener's port may be (and then a "refusing" endpoint would reach
// another endpoint's server).
func closedPort(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("%s accepts connections", addr)
	}
	return addr
}
