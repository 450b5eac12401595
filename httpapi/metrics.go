package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memstore/memstore"
)

// countsTimeout bounds the database count behind the gauges, so that a
// slow database cannot stall a scrape.
const countsTimeout = 2 * time.Second

// metrics are the server's Prometheus metrics: requests by route, method
// and status; their durations by route; and, when the server has a count
// function, gauges of what the database holds.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	handler  http.Handler // GET /metrics
}

// newMetrics registers the metrics in reg, or in a private registry with
// the Go runtime and process collectors when reg is nil (never the global
// one). Several servers may share one registry: they then share the
// metrics too.
func newMetrics(reg *prometheus.Registry, counts func(context.Context) (memstore.Counts, error), pool func() memstore.PoolStats, log *slog.Logger) *metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &metrics{
		requests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memstore_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"})),
		duration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "memstore_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"})),
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}
	if counts != nil {
		register(reg, prometheus.Collector(&countsCollector{counts: counts, log: log}))
	}
	if pool != nil {
		register(reg, prometheus.Collector(poolCollector(pool)))
	}
	return m
}

// register registers c in reg, or returns the equal collector already
// there. Any other failure (a clash with a different metric of the same
// name) leaves c unregistered: the server works, without those metrics.
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	var are prometheus.AlreadyRegisteredError
	if err := reg.Register(c); errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	return c
}

// observe records one answered request.
func (m *metrics) observe(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, methodLabel(method), strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

// methodLabel bounds the method label to the methods HTTP defines, so
// that clients cannot create series at will.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// countsCollector reports what the database holds, counted at each
// scrape.
type countsCollector struct {
	counts func(context.Context) (memstore.Counts, error)
	log    *slog.Logger
}

var (
	workspacesDesc = prometheus.NewDesc("memstore_workspaces", "Workspaces in the database.", nil, nil)
	storesDesc     = prometheus.NewDesc("memstore_stores", "Memory stores in the database, archived ones included.", nil, nil)
	memoriesDesc   = prometheus.NewDesc("memstore_memories", "Live memories in the database.", nil, nil)
	versionsDesc   = prometheus.NewDesc("memstore_memory_versions", "Memory versions in the database.", nil, nil)
	backlogDesc    = prometheus.NewDesc("memstore_search_backlog", "Writes of memories not yet taken in by the search indexes (every memory while they are being built).", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *countsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- workspacesDesc
	ch <- storesDesc
	ch <- memoriesDesc
	ch <- versionsDesc
	ch <- backlogDesc
}

// Collect implements prometheus.Collector. A failed count is logged and
// leaves the gauges out of that scrape.
func (c *countsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), countsTimeout)
	defer cancel()
	n, err := c.counts(ctx)
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelError, "count for metrics", slog.String("error", err.Error()))
		return
	}
	for _, g := range []struct {
		d *prometheus.Desc
		v int64
	}{{workspacesDesc, n.Workspaces}, {storesDesc, n.Stores}, {memoriesDesc, n.Memories}, {versionsDesc, n.Versions}, {backlogDesc, n.SearchBacklog}} {
		ch <- prometheus.MustNewConstMetric(g.d, prometheus.GaugeValue, float64(g.v))
	}
}

// poolCollector reports the database's connections, read at each scrape.
type poolCollector func() memstore.PoolStats

var (
	connectionsDesc    = prometheus.NewDesc("memstore_db_connections", "Open connections to the database, by state.", []string{"state"}, nil)
	maxConnectionsDesc = prometheus.NewDesc("memstore_db_connections_max", "The most connections to the database that may be open.", nil, nil)
	waitsDesc          = prometheus.NewDesc("memstore_db_connection_waits_total", "Requests for a connection that waited for one.", nil, nil)
	waitSecondsDesc    = prometheus.NewDesc("memstore_db_connection_wait_seconds_total", "Time spent waiting for a connection.", nil, nil)
)

// Describe implements prometheus.Collector.
func (p poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- connectionsDesc
	ch <- maxConnectionsDesc
	ch <- waitsDesc
	ch <- waitSecondsDesc
}

// Collect implements prometheus.Collector.
func (p poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := p()
	ch <- prometheus.MustNewConstMetric(connectionsDesc, prometheus.GaugeValue, float64(s.InUse), "in_use")
	ch <- prometheus.MustNewConstMetric(connectionsDesc, prometheus.GaugeValue, float64(s.Idle), "idle")
	ch <- prometheus.MustNewConstMetric(maxConnectionsDesc, prometheus.GaugeValue, float64(s.Max))
	ch <- prometheus.MustNewConstMetric(waitsDesc, prometheus.CounterValue, float64(s.Waits))
	ch <- prometheus.MustNewConstMetric(waitSecondsDesc, prometheus.CounterValue, s.WaitTime.Seconds())
}
