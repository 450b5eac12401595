package console

import "testing"

// TestWithNotice: a page's URL names its notice in ?done=, and is left
// alone when there is none to show.
func TestWithNotice(t *testing.T) {
	for _, c := range []struct{ done, want string }{
		{"", Prefix + "dreams/drm_1"},
		{"canceled", Prefix + "dreams/drm_1?done=canceled"},
	} {
		if got := dreamURL("drm_1", c.done); got != c.want {
			t.Errorf("dreamURL(drm_1, %q) = %q, want %q", c.done, got, c.want)
		}
	}
	if got, want := memoryURL("memstore_1", "mem_1", "saved"), Prefix+"stores/memstore_1/memories/mem_1?done=saved"; got != want {
		t.Errorf("memoryURL = %q, want %q", got, want)
	}
}
