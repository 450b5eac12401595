package loadgen

import (
	"math"
	"testing"
	"time"
)

func TestMedianAndRatios(t *testing.T) {
	run := func(perSecond float64, p50 time.Duration, withList bool) *Report {
		r := &Report{Mix: MixMixed, Concurrency: 2, Duration: time.Second, Memories: 5,
			Total: Stats{Op: "all", Requests: 10, PerSecond: perSecond, P50: p50, P99: 2 * p50, P999: 3 * p50, Max: 4 * p50}}
		r.Ops = []Stats{{Op: OpRetrieve, Requests: 10, PerSecond: perSecond, P50: p50, P99: 2 * p50, P999: 3 * p50, Max: 4 * p50, Errors: map[string]int{"500": 1}}}
		if withList {
			r.Ops = append(r.Ops, Stats{Op: OpList, Requests: 1, PerSecond: 1, P50: p50, P99: p50, P999: p50, Max: p50})
		}
		return r
	}
	// The median of 100, 300 and 200 is 200, whatever the order; the
	// median of two is their mean.
	a := Median([]*Report{run(100, 3*time.Millisecond, false), run(300, time.Millisecond, true), run(200, 2*time.Millisecond, false)})
	if a.Total.PerSecond != 200 || a.Total.P50 != 2*time.Millisecond || a.Total.P999 != 6*time.Millisecond || a.Total.Requests != 30 {
		t.Errorf("median: %+v", a.Total)
	}
	if len(a.Ops) != 2 || a.Ops[0].Errors["500"] != 3 || a.Ops[1].Op != OpList || a.Ops[1].Requests != 1 {
		t.Errorf("median ops: %+v", a.Ops)
	}
	b := Median([]*Report{run(50, time.Millisecond, false), run(150, 3*time.Millisecond, false)})
	if b.Total.PerSecond != 100 || b.Total.P50 != 2*time.Millisecond {
		t.Errorf("median of two: %+v", b.Total)
	}
	// Lists, which b never made, get no ratio; the others are finite.
	rs := Ratios(a, b)
	if len(rs) != 2 || rs[0].Op != OpRetrieve || rs[1].Op != "all" {
		t.Fatalf("ratios: %+v", rs)
	}
	for _, r := range rs {
		if r.PerSecond != 2 || r.P50 != 1 || r.P99 != 1 || r.P999 != 1 {
			t.Errorf("ratio: %+v", r)
		}
		for _, v := range []float64{r.PerSecond, r.P50, r.P99, r.P999} {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				t.Errorf("ratio not finite: %+v", r)
			}
		}
	}
}
