package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Help is printed one way for every command: the command's help text
// (usage, what it does, examples), then its flags in groups, each as
// --name ARG with its description below, and its default said once. Asked
// for (--help, memstore help COMMAND) it goes to standard output with exit
// status 0, so that it can be paged; after a usage error, standard error
// gets only the usage lines and where to find the rest.

// helpWidth is the width help wraps flag descriptions to.
const helpWidth = 80

// flagGroups puts a flag in a group of the help by its name: the first
// group whose test matches; the rest are "Flags", listed first.
var flagGroups = []struct {
	title string
	match func(name string) bool
}{
	{"Backend flags", func(n string) bool {
		switch n {
		case "db", "url", "api-key", "token", "workspace", "store":
			return true
		}
		return false
	}},
	{"Console flags", func(n string) bool {
		return n == "console" || strings.HasPrefix(n, "console-") || n == "trusted-proxies" || n == "init-admin"
	}},
	{"Limit flags", func(n string) bool {
		for _, p := range []string{"max-", "search-rate-", "mcp-", "feed-"} {
			if strings.HasPrefix(n, p) {
				return true
			}
		}
		return false
	}},
	{"Webhook flags", func(n string) bool { return strings.HasPrefix(n, "webhook-") }},
	{"TLS flags", func(n string) bool { return strings.HasPrefix(n, "tls-") }},
}

// flagOutput is where a command's flag set writes: what the flag package
// reports (an unknown flag, a bad value) goes to standard error; it also
// keeps the command's help text and standard output, for parse.
type flagOutput struct {
	io.Writer           // standard error
	stdout    io.Writer // where asked-for help goes
	help      string
}

// setHelp gives fs its help text, printed by parse on --help.
func setHelp(fs *flag.FlagSet, help string) {
	if o, ok := fs.Output().(*flagOutput); ok {
		o.help = help
	}
}

// helpAsked prints fs's help on standard output, for --help.
func helpAsked(fs *flag.FlagSet) {
	name := strings.TrimPrefix(fs.Name(), "memstore ")
	if o, ok := fs.Output().(*flagOutput); ok {
		writeHelp(o.stdout, name, fs, o.help)
		return
	}
	writeHelp(fs.Output(), name, fs, "")
}

// usageHint tells, on standard error after a usage error, how the
// command is used and where its help is.
func usageHint(fs *flag.FlagSet) {
	o, ok := fs.Output().(*flagOutput)
	if !ok {
		return
	}
	if u := usageLines(o.help); u != "" {
		fmt.Fprint(o, u)
	}
	fmt.Fprintf(o, "Run '%s --help' for more.\n", fs.Name())
}

// usageLines is the first paragraph of a help text, its Usage lines.
func usageLines(help string) string {
	if !strings.HasPrefix(help, "Usage:") {
		return ""
	}
	p, _, _ := strings.Cut(help, "\n\n")
	return p + "\n"
}

// writeHelp writes the help of command name (as typed after memstore):
// help, its examples unless help has its own, then the flags of fs, if
// any, in their groups.
func writeHelp(w io.Writer, name string, fs *flag.FlagSet, help string) {
	fmt.Fprint(w, help)
	if !strings.Contains(help, "\nExamples:\n") {
		ex, ok := examples[name]
		if parent, _, isSub := strings.Cut(name, " "); !ok && isSub {
			ex = examples[parent]
		}
		if len(ex) > 0 {
			fmt.Fprint(w, "\nExamples:\n")
			for _, l := range ex {
				fmt.Fprintln(w, "  "+l)
			}
		}
	}
	if fs == nil {
		return
	}
	groups := make([][]*flag.Flag, len(flagGroups)+1) // 0 is "Flags"
	fs.VisitAll(func(f *flag.Flag) {
		g := 0
		for i, fg := range flagGroups {
			if fg.match(f.Name) {
				g = i + 1
				break
			}
		}
		groups[g] = append(groups[g], f)
	})
	for i, flags := range groups {
		if len(flags) == 0 {
			continue
		}
		title := "Flags"
		if i > 0 {
			title = flagGroups[i-1].title
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, f := range flags {
			writeFlag(w, f)
		}
	}
}

// writeFlag writes one flag: --name ARG, then its description wrapped
// below, with its default unless the description says it or it is the
// type's zero value.
func writeFlag(w io.Writer, f *flag.Flag) {
	arg, usage := flag.UnquoteUsage(f)
	switch {
	case isBoolFlag(f):
		arg = ""
	case strings.Contains(f.Usage, "`"): // named by its description
	case arg == "int" || arg == "uint" || arg == "float":
		arg = "N"
	case arg == "string" || arg == "value":
		arg = "VALUE"
	default:
		arg = strings.ToUpper(arg) // "duration"
	}
	line := "  --" + f.Name
	if arg != "" {
		line += " " + arg
	}
	if !strings.Contains(usage, "default") && !isZeroDefault(f) {
		d := f.DefValue
		if g, ok := f.Value.(flag.Getter); ok {
			if _, isString := g.Get().(string); isString {
				d = fmt.Sprintf("%q", d)
			}
		}
		usage += " (default " + d + ")"
	}
	fmt.Fprintln(w, line)
	for _, l := range wrap(usage, helpWidth-6) {
		fmt.Fprintln(w, "      "+l)
	}
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// isZeroDefault reports whether a flag's default is its type's zero
// value, which goes without saying.
func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	t := reflect.TypeOf(f.Value)
	if t.Kind() != reflect.Pointer {
		return false
	}
	zero, ok := reflect.New(t.Elem()).Interface().(flag.Value)
	if !ok {
		return false
	}
	defer func() { recover() }() // a String that needs its value set
	return zero.String() == f.DefValue
}

// wrap cuts s into lines of at most width characters, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
