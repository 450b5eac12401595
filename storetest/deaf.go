package storetest

import (
	"context"

	"github.com/memstore/memstore"
)

// DeafSessions is a SessionService whose revocations go unheard, as those
// made by another process while this one's line to the database is down:
// its listeners hear only what a test tells them through Notices. Give it
// to a server in place of the Core to test what the server does when
// notices were lost and then said to be (memstore.Revocation.Unheard).
type DeafSessions struct {
	memstore.SessionService
	Notices memstore.Revocations
}

// NotifyRevocations implements memstore.RevocationNotifier: only what
// Notices tells.
func (d *DeafSessions) NotifyRevocations(f func(memstore.Revocation)) (stop func()) {
	return d.Notices.NotifyRevocations(f)
}

// CheckCaller implements memstore.CallerChecker by the wrapped service's.
func (d *DeafSessions) CheckCaller(ctx context.Context, c *memstore.Caller) error {
	return d.SessionService.(memstore.CallerChecker).CheckCaller(ctx, c)
}
