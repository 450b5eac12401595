package loadgen

import (
	"slices"
	"time"
)

// Median is what several runs of one mix did, kind of request by kind:
// each figure (requests a second, p50, p99, p99.9, max, the run's
// duration) is the median of that figure over the runs, so that one
// disturbed run does not move it; requests and errors are the sums.
func Median(rs []*Report) *Report {
	if len(rs) == 0 {
		return nil
	}
	m := &Report{Mix: rs[0].Mix, Concurrency: rs[0].Concurrency, Memories: rs[0].Memories}
	m.Duration = median(rs, func(r *Report) time.Duration { return r.Duration })
	m.Total = medianStats("all", rs, func(r *Report) *Stats { return &r.Total })
	for _, op := range Ops {
		of := func(r *Report) *Stats {
			for i := range r.Ops {
				if r.Ops[i].Op == op {
					return &r.Ops[i]
				}
			}
			return nil
		}
		if slices.ContainsFunc(rs, func(r *Report) bool { return of(r) != nil }) {
			m.Ops = append(m.Ops, medianStats(op, rs, of))
		}
	}
	return m
}

// medianStats is the median of the Stats of op over the runs; a run
// without op counts as one that made none.
func medianStats(op Op, rs []*Report, of func(*Report) *Stats) Stats {
	var none Stats
	get := func(r *Report) *Stats {
		if s := of(r); s != nil {
			return s
		}
		return &none
	}
	st := Stats{Op: op}
	for _, r := range rs {
		s := get(r)
		st.Requests += s.Requests
		for k, n := range s.Errors {
			if st.Errors == nil {
				st.Errors = map[string]int{}
			}
			st.Errors[k] += n
		}
	}
	st.PerSecond = median(rs, func(r *Report) float64 { return get(r).PerSecond })
	st.P50 = median(rs, func(r *Report) time.Duration { return get(r).P50 })
	st.P99 = median(rs, func(r *Report) time.Duration { return get(r).P99 })
	st.P999 = median(rs, func(r *Report) time.Duration { return get(r).P999 })
	st.Max = median(rs, func(r *Report) time.Duration { return get(r).Max })
	return st
}

// median is the middle of f over rs, the mean of the two middles for an
// even number.
func median[T time.Duration | float64](rs []*Report, f func(*Report) T) T {
	v := make([]T, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// Ratio is one kind of request's figures on one server divided by those
// on another: above 1, more requests a second, or a longer latency.
type Ratio struct {
	Op        Op      `json:"op"`
	PerSecond float64 `json:"requests_per_second"`
	P50       float64 `json:"p50"`
	P99       float64 `json:"p99"`
	P999      float64 `json:"p999"`
}

// Ratios divides a's figures by b's for all requests and for each kind
// of request, leaving out the kinds that either did not make, so that
// every ratio is finite.
func Ratios(a, b *Report) []Ratio {
	var out []Ratio
	for _, sa := range append(a.Ops, a.Total) {
		sb := b.Total
		if sa.Op != "all" {
			i := slices.IndexFunc(b.Ops, func(s Stats) bool { return s.Op == sa.Op })
			if i < 0 {
				continue
			}
			sb = b.Ops[i]
		}
		if sa.PerSecond == 0 || sb.PerSecond == 0 || sb.P50 == 0 || sb.P99 == 0 || sb.P999 == 0 {
			continue
		}
		out = append(out, Ratio{
			Op: sa.Op, PerSecond: sa.PerSecond / sb.PerSecond,
			P50: float64(sa.P50) / float64(sb.P50), P99: float64(sa.P99) / float64(sb.P99), P999: float64(sa.P999) / float64(sb.P999),
		})
	}
	return out
}
