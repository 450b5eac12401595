package httpapi

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

func paramsOf(query string) *params {
	return newParams(httptest.NewRequest("GET", "/v1/x?"+query, nil))
}

// TestParamsOnly: a list that refuses parameters it does not know names
// the first of them in the order of their names, and lets the known
// ones through.
func TestParamsOnly(t *testing.T) {
	known := map[string]bool{"limit": true, "types[]": true}
	if err := paramsOf("limit=2&types[]=a").only(known, "cannot filter by %s"); err != nil {
		t.Errorf("known parameters refused: %v", err)
	}
	err := paramsOf("zebra=1&limit=2&apple=1").only(known, "cannot filter by %s")
	if memstore.ErrorCode(err) != memstore.EInvalid || memstore.ErrorMessage(err) != `cannot filter by "apple"` {
		t.Errorf("unknown parameters: %v; want EInvalid naming \"apple\"", err)
	}
}

// TestParamsList: a list parameter's values, sent as name[] or name, the
// bracketed ones first.
func TestParamsList(t *testing.T) {
	p := paramsOf("statuses=b&statuses[]=a&statuses[]=c&other=d")
	if got := p.list("statuses"); !slices.Equal(got, []string{"a", "c", "b"}) {
		t.Errorf("list = %q, want [a c b]", got)
	}
	if got := p.list("types"); len(got) != 0 {
		t.Errorf("an absent list = %q, want none", got)
	}
}

// TestParamsAscending: order=asc or desc, the list's own order when
// absent, and a clear error for anything else.
func TestParamsAscending(t *testing.T) {
	for _, c := range []struct {
		query     string
		def, want bool
	}{{"", false, false}, {"", true, true}, {"order=asc", false, true}, {"order=desc", true, false}} {
		p := paramsOf(c.query)
		if got := p.ascending(c.def); got != c.want || p.err != nil {
			t.Errorf("%q with default %v: %v, %v; want %v", c.query, c.def, got, p.err, c.want)
		}
	}
	p := paramsOf("order=sideways")
	p.ascending(true)
	if p.err == nil || !strings.Contains(memstore.ErrorMessage(p.err), `order must be asc or desc, not "sideways"`) {
		t.Errorf("a bad order: %v", p.err)
	}
}
