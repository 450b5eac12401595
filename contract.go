package memstore

import "context"

// memstore has two contracts, each one interface: Services, what every
// surface calls, and Database, what every backend implements. The suite
// in package storetest holds both to their behaviour (storetest.RunAll).

// Services are the caller-facing services: what the HTTP API, the MCP
// server, the console and the command line call, with the caller each
// authenticated. Core implements them over a Database, and
// httpapi.Client over a server.
type Services interface {
	StoreService
	MemoryService
	ExportService
	VersionService
	SessionService
	SearchService
	FeedService
	DreamService
	EventService
}

var _ Services = (*Core)(nil)

// Database is the one interface a backend implements (sqlite.DB and
// postgres.DB do): the storage of a Core (Backend, keys included) and of
// what works beside it (users, webhooks and their deliveries), the copy of a
// whole database (memstore migrate), the notices it gives, and what
// memstore serve reports and maintains. Its storage methods trust their
// callers: only a Core and the services beside it (Users, Webhooks, the
// deliverer) call them, after their checks.
type Database interface {
	Backend
	MemoryRevalidatorStorage
	UserStorage
	WebhookStorage
	WebhookDeliveryStorage
	Dumper
	Restorer
	RevocationNotifier
	EventNotifier
	Monitor

	// Vacuum gives back the space of what was changed, deleted or
	// redacted; full asks for the thorough kind where there are two.
	Vacuum(ctx context.Context, full bool) error
	// Close closes the database; nothing may use it after.
	Close() error
}

// Monitor is what a database tells of itself, for memstore serve's
// /metrics and /healthz.
type Monitor interface {
	// Counts is how much the database holds.
	Counts(context.Context) (Counts, error)
	// PoolStats is the state of its connections.
	PoolStats() PoolStats
	// Ping reports whether it answers.
	Ping(context.Context) error
}
