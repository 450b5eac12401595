package console

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestContrast: in the light and the dark scheme, every colour of text
// the stylesheet sets reads at the contrast WCAG AA asks of body text
// (4.5:1) against the backgrounds it is shown on.
func TestContrast(t *testing.T) {
	b, err := staticFS.ReadFile("static/console.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	roots := regexp.MustCompile(`:root \{([^}]*)\}`).FindAllStringSubmatch(css, -1)
	if len(roots) != 2 {
		t.Fatalf("%d :root rules, want the light and the dark one", len(roots))
	}
	// Text colours, by variable, and the backgrounds each appears on.
	on := map[string][]string{
		"fg": {"bg", "card"}, "muted": {"bg", "card"}, "accent": {"bg", "card"}, "bad": {"bg", "card"},
		"add": {"card"}, "bg": {"accent", "bad"}, // a button's text on its colour
	}
	for i, scheme := range []string{"light", "dark"} {
		vars := map[string]string{}
		for _, m := range regexp.MustCompile(`--([a-z]+): (#[0-9a-f]{6}|#[0-9a-f]{3})\b`).FindAllStringSubmatch(roots[i][1], -1) {
			vars[m[1]] = m[2]
		}
		for fg, bgs := range on {
			for _, bg := range bgs {
				if vars[fg] == "" || vars[bg] == "" {
					t.Errorf("%s scheme: --%s or --%s is not set", scheme, fg, bg)
					continue
				}
				if r := contrast(t, vars[fg], vars[bg]); r < 4.5 {
					t.Errorf("%s scheme: --%s on --%s has a contrast of %.2f:1", scheme, fg, bg, r)
				}
			}
		}
	}
	// Every text colour is one of the variables checked above, or set
	// together with its own background.
	for _, rule := range regexp.MustCompile(`([^{}]+)\{([^}]*)\}`).FindAllStringSubmatch(css, -1) {
		for _, m := range regexp.MustCompile(`(?:^|;)\s*color: ([^;]+)`).FindAllStringSubmatch(rule[2], -1) {
			v := strings.TrimSpace(m[1])
			if name, ok := strings.CutPrefix(v, "var(--"); ok {
				if _, known := on[strings.TrimSuffix(name, ")")]; !known {
					t.Errorf("%s: colour %s is not checked for contrast", strings.TrimSpace(rule[1]), v)
				}
				continue
			}
			bg := regexp.MustCompile(`background: (#[0-9a-f]{6}|#[0-9a-f]{3})\b`).FindStringSubmatch(rule[2])
			if bg == nil {
				t.Errorf("%s: colour %s is set without its background", strings.TrimSpace(rule[1]), v)
			} else if r := contrast(t, v, bg[1]); r < 4.5 {
				t.Errorf("%s: %s on %s has a contrast of %.2f:1", strings.TrimSpace(rule[1]), v, bg[1], r)
			}
		}
	}
}

// contrast is WCAG's contrast ratio of two colours, #rrggbb or #rgb.
func contrast(t *testing.T, a, b string) float64 {
	t.Helper()
	lum := func(hex string) float64 {
		if len(hex) == 4 {
			hex = string([]byte{'#', hex[1], hex[1], hex[2], hex[2], hex[3], hex[3]})
		}
		if len(hex) != 7 {
			t.Fatalf("colour %q is not #rrggbb or #rgb", hex)
		}
		var c [3]float64
		for i := range c {
			n, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
			x := float64(n) / 255
			if x <= 0.03928 {
				c[i] = x / 12.92
			} else {
				c[i] = math.Pow((x+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
	}
	la, lb := lum(a), lum(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}
