package console

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/memstore/memstore"
)

// The home page: the workspace at a glance (the core's Overview), charts
// of its changes by day, the actors most active among its latest
// changes, the webhook endpoints failing (disabled by memstore after
// failures, or enabled with their latest attempt failed), and the latest
// changes.

// homeRecent is how many of the latest changes the home page reads, to
// list the newest and rank the most active actors.
const homeRecent = 100

// homeShown is how many of the latest changes, of the most active
// actors and of the stores in the chart by store the home page shows.
const homeShown = 8

// homeDeliveries is how many of an enabled webhook endpoint's latest
// deliveries the home page reads to find its latest attempt.
const homeDeliveries = 5

// A failingEndpoint is a webhook endpoint on the home page's list of
// those failing: disabled by memstore (its DisabledReason), or enabled
// with Last, the delivery whose latest attempt failed.
type failingEndpoint struct {
	Endpoint memstore.WebhookEndpoint
	Last     *memstore.WebhookDelivery
}

// lastFailure is, of an endpoint's deliveries, the one attempted last
// when that attempt failed, else nil (none attempted, or the last
// attempt succeeded).
func lastFailure(log []memstore.WebhookDelivery) *memstore.WebhookDelivery {
	var last *memstore.WebhookDelivery
	for i, d := range log {
		if d.LastAttemptAt != nil && (last == nil || d.LastAttemptAt.After(*last.LastAttemptAt)) {
			last = &log[i]
		}
	}
	if last == nil || last.LastError == "" {
		return nil
	}
	return last
}

// The chart's geometry, in the SVG's units (it scales to its box).
const (
	chartW, chartH = 600, 160
	chartTop       = 10 // room above the highest bar
	chartBottom    = 20 // room below the bars for the days' labels
	chartLeft      = 30 // room left of the bars for the scale
)

// A chart is a stacked bar chart of changes by day, drawn as SVG by the
// template "chart", with its numbers as a table for those who cannot see
// it.
type chart struct {
	ID, Title, Desc string
	Days            []time.Time
	Bars            []chartBar
	Series          []chartSeries // the legend and the table's rows
	Max             int64
	Ticks           []chartTick // the days' labels
	Rows            []chartRow  // the days with a change, for the table
	W, H, Base, Top int
}

// chartRow is a day's changes of each series.
type chartRow struct {
	Day    time.Time
	Counts []int64
}

type chartBar struct {
	X, W int
	Segs []chartSeg
}

type chartSeg struct {
	Y, H  int
	Class string
	Label string // what it counts, for a tooltip
}

type chartSeries struct {
	Name, Class string
	Counts      []int64
	Total       int64
}

type chartTick struct {
	X, Y   int
	Text   string
	Anchor string // where the text is anchored at X: start, middle or end
}

// newChart lays series out as stacked bars, one a day of days.
func newChart(id, title string, days []time.Time, series []chartSeries) chart {
	c := chart{ID: id, Title: title, Days: days, Series: series, W: chartW, H: chartH, Base: chartH - chartBottom, Top: chartTop}
	totals := make([]int64, len(days))
	for _, s := range series {
		for d, n := range s.Counts {
			totals[d] += n
		}
	}
	c.Max = max(1, slices.Max(append(totals, 0)))
	var sum int64
	for _, n := range totals {
		sum += n
	}
	c.Desc = fmt.Sprintf("Changes of each of the last %d days, from %s to %s: %d in all, at most %d a day.",
		len(days), days[0].Format("2 Jan"), days[len(days)-1].Format("2 Jan"), sum, c.Max)
	plot := c.Base - chartTop
	step := (chartW - chartLeft) / len(days)
	for d, day := range days {
		b := chartBar{X: chartLeft + d*step + 1, W: step - 2}
		y := c.Base
		for _, s := range series {
			n := s.Counts[d]
			if n == 0 {
				continue
			}
			h := max(1, int(int64(plot)*n/c.Max))
			y -= h
			b.Segs = append(b.Segs, chartSeg{Y: y, H: h, Class: s.Class, Label: fmt.Sprintf("%s, %s: %d", day.Format("2 Jan"), s.Name, n)})
		}
		c.Bars = append(c.Bars, b)
		if totals[d] > 0 {
			row := chartRow{Day: day}
			for _, s := range series {
				row.Counts = append(row.Counts, s.Counts[d])
			}
			c.Rows = append(c.Rows, row)
		}
		switch { // a label a week, and today's, which ends at the right
		case d == len(days)-1:
			c.Ticks = append(c.Ticks, chartTick{X: b.X + b.W, Y: chartH - 5, Text: day.Format("2 Jan"), Anchor: "end"})
		case d%7 == 2 && d < len(days)-4:
			c.Ticks = append(c.Ticks, chartTick{X: b.X + b.W/2, Y: chartH - 5, Text: day.Format("2 Jan"), Anchor: "middle"})
		}
	}
	return c
}

// kindNames are the chart's names of each kind of actor.
var kindNames = map[memstore.ActorType]string{
	memstore.ActorAPIKey: "API keys", memstore.ActorSession: "agents (sessions)", memstore.ActorUser: "users", memstore.ActorServiceAccount: "service accounts",
}

// activeActor is an actor among the latest changes, with how many of
// them it made and when its last was.
type activeActor struct {
	Actor   memstore.Actor
	Changes int
	Last    time.Time
}

func (h *Handler) homePage(w http.ResponseWriter, r *http.Request, s *signedIn) {
	if h.cfg.Activity == nil {
		http.Redirect(w, r, Prefix+"stores", http.StatusSeeOther)
		return
	}
	ctx := r.Context()
	o, err := h.cfg.Activity.Overview(ctx, s.caller, time.Now())
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	names := make(map[string]string, len(o.Stores))
	for _, st := range o.Stores {
		names[st.ID] = st.Name
	}
	data := map[string]any{"Overview": o, "StoreNames": names, "Max": memstore.MaxActivityStores}
	if len(o.Days) > 0 {
		var kinds, stores []chartSeries
		for i, sr := range o.ByActor {
			kinds = append(kinds, chartSeries{Name: cmp.Or(kindNames[sr.Actor], string(sr.Actor)), Class: fmt.Sprintf("c%d", i%6), Counts: sr.Counts, Total: sr.Total})
		}
		for i, sr := range o.ByStore {
			if i == homeShown-1 && len(o.ByStore) > homeShown {
				// The rest as one series.
				rest := chartSeries{Name: "other stores", Class: "c5", Counts: make([]int64, len(o.Days))}
				for _, sr := range o.ByStore[i:] {
					for d, n := range sr.Counts {
						rest.Counts[d] += n
					}
					rest.Total += sr.Total
				}
				stores = append(stores, rest)
				break
			}
			stores = append(stores, chartSeries{Name: cmp.Or(names[sr.StoreID], sr.StoreID), Class: fmt.Sprintf("c%d", i%6), Counts: sr.Counts, Total: sr.Total})
		}
		data["ByKind"] = newChart("chart-kind", "Changes by kind of actor", o.Days, kinds)
		data["ByStore"] = newChart("chart-store", "Changes by store", o.Days, stores)
	}
	p, err := h.cfg.Activity.Activity(ctx, s.caller, memstore.ActivityFilter{Limit: homeRecent})
	if err != nil {
		h.failErr(w, r, s, err)
		return
	}
	byActor := map[memstore.Actor]*activeActor{}
	var active []*activeActor
	var actors []memstore.Actor
	for _, v := range p.Items {
		a := byActor[v.CreatedBy]
		if a == nil {
			a = &activeActor{Actor: v.CreatedBy, Last: v.CreatedAt}
			byActor[v.CreatedBy] = a
			active = append(active, a)
		}
		a.Changes++
	}
	slices.SortStableFunc(active, func(a, b *activeActor) int { return cmp.Compare(b.Changes, a.Changes) })
	active = active[:min(len(active), homeShown)]
	for _, a := range active {
		actors = append(actors, a.Actor)
	}
	recent := p.Items[:min(len(p.Items), homeShown)]
	for _, v := range recent {
		actors = append(actors, v.CreatedBy)
	}
	data["Active"], data["Recent"], data["Read"] = active, recent, len(p.Items)
	data["Names"] = h.actorNames(ctx, s, actors...)
	if h.cfg.Webhooks != nil {
		// The endpoints, for those the core lets manage them.
		eps, _, err := h.cfg.Webhooks.Webhooks(ctx, s.caller, memstore.WebhookFilter{Limit: memstore.MaxPageSize})
		switch {
		case memstore.ErrorCode(err) == memstore.EPermission:
		case err != nil:
			h.failErr(w, r, s, err)
			return
		}
		var failing []failingEndpoint
		for _, e := range eps {
			switch {
			case e.DisabledReason != "":
				failing = append(failing, failingEndpoint{Endpoint: e})
			case e.State == memstore.WebhookEnabled:
				// An endpoint still enabled fails while its latest
				// attempt failed: a few of its deliveries, by the
				// primary key, tell (at most MaxWebhookEndpoints reads).
				log, err := h.cfg.Webhooks.WebhookDeliveries(ctx, s.caller, e.ID, homeDeliveries)
				switch memstore.ErrorCode(err) {
				case "":
				case memstore.ENotFound, memstore.EInvalid: // deleted since, or no log kept
					continue
				default:
					h.failErr(w, r, s, err)
					return
				}
				if d := lastFailure(log); d != nil {
					failing = append(failing, failingEndpoint{Endpoint: e, Last: d})
				}
			}
		}
		data["Webhooks"], data["Failing"] = err == nil, failing
	}
	h.render(w, r, http.StatusOK, "home", s, view{Title: "Home", Notice: notice(r), Data: data})
}
