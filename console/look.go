package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/memstore/memstore"
)

// How every page shows an ID, a time and an actor: one helper each,
// the templates' funcs shortid, when and actor.

// shortIDTail is how many characters of an ID's end a short ID keeps:
// the random end of its ULID, which tells apart IDs made the same
// second (their beginnings are their time).
const shortIDTail = 6

// shortID is an ID as a table shows it: its prefix and its last
// characters ("memver_…k2qz9a"), the whole ID on hover and for screen
// readers; the console's script (static/copy.js) adds a button that
// copies it, and without script the whole ID is on the record's own
// page, to select.
func shortID(id string) template.HTML {
	short := id
	if i := strings.LastIndexByte(id, '_') + 1; len(id)-i > shortIDTail+2 {
		short = id[:i] + "…" + id[len(id)-shortIDTail:]
	}
	e := template.HTMLEscapeString(id)
	if short == id {
		return template.HTML(`<code class="id">` + e + `</code>`)
	}
	return template.HTML(`<code class="id" title="` + e + `"><span class="full">` + e + `</span><span class="short" aria-hidden="true">` +
		template.HTMLEscapeString(short) + `</span></code>`)
}

// ago is how long before now t was, or how long after now it is, in
// words ("3 min ago", "in 2 days").
func ago(t, now time.Time) string {
	d := now.Sub(t)
	past := d >= 0
	if !past {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		if past {
			return "just now"
		}
		return "in under a minute"
	case d < time.Hour:
		s = fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%d h", int(d/time.Hour))
	case d < 60*24*time.Hour:
		s = fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d < 2*365*24*time.Hour:
		s = fmt.Sprintf("%d months", int(d/(30*24*time.Hour)))
	default:
		s = fmt.Sprintf("%d years", int(d/(365*24*time.Hour)))
	}
	if past {
		return s + " ago"
	}
	return "in " + s
}

// when is a time as pages show it: how long ago, the exact time on
// hover and for machines (a <time> element). A nil time is empty.
func when(v any) template.HTML {
	var t time.Time
	switch v := v.(type) {
	case time.Time:
		t = v
	case *time.Time:
		if v == nil {
			return ""
		}
		t = *v
	default:
		return ""
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339) + `" title="` + formatTime(t) + `">` +
		template.HTMLEscapeString(ago(t, time.Now())) + `</time>`)
}

// actorKinds are the short words of the badge of each kind of actor.
var actorKinds = map[memstore.ActorType]string{
	memstore.ActorAPIKey: "key", memstore.ActorSession: "agent", memstore.ActorUser: "user", memstore.ActorServiceAccount: "service",
}

// actor is who made a change as pages show it: its kind as a badge, and
// its name (a key's name, a session's title or agent, a user's name)
// where the person may read it, else its short ID; its kind and whole ID
// on hover.
func actor(a memstore.Actor, name string) template.HTML {
	kind := actorKinds[a.Type]
	if kind == "" {
		kind = strings.TrimSuffix(string(a.Type), "_actor")
	}
	var who template.HTML
	if name != "" {
		who = template.HTML(`<span class="name">` + template.HTMLEscapeString(name) + `</span>`)
	} else {
		who = shortID(a.ID)
	}
	return template.HTML(`<span class="actor" title="`+template.HTMLEscapeString(string(a.Type)+" "+a.ID)+`"><span class="badge">`+
		template.HTMLEscapeString(kind)+`</span> `) + who + `</span>`
}
