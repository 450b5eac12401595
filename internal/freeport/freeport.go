// Package freeport finds a TCP port of the loopback address for a child
// process that must be told its port before it starts (a test's
// PostgreSQL, browser or server). The port was free a moment ago; another
// process may take it before the child does, which such callers retry or
// accept.
package freeport

import "net"

// Port returns a TCP port of 127.0.0.1 that was free a moment ago.
func Port() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
