package memdir

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Detail is how much of memstore's memory guidance a prompt carries.
type Detail int

// The levels of guidance, from the whole text to a single line. A prompt
// with a size limit gives up guidance before it gives up any of the index.
const (
	DetailFull    Detail = iota // every section
	DetailShort                 // one paragraph with the essentials
	DetailMinimal               // where the directory is, and nothing else
)

// Guidance is memstore's guidance to an agent on using the memory
// directory dir: what the directory is, the four types, what not to save,
// how to save (the topic file, then the index line), when to read memory,
// and to verify what a memory says before acting on it. With team it adds
// the team directory and the rules that decide which memory goes there.
func Guidance(dir string, team bool, detail Detail) string {
	dir = withSep(dir)
	r := strings.NewReplacer("{DIR}", dir, "{TEAM}", withSep(filepath.Join(dir, "team")))
	switch detail {
	case DetailFull:
		s := r.Replace(guidanceFull)
		if team {
			s += "\n" + r.Replace(teamFull)
		}
		return s
	case DetailShort:
		s := r.Replace(guidanceShort)
		if team {
			s += "\n\n" + r.Replace(teamShort)
		}
		return s + "\n"
	}
	s := "# Memory\n\nYour memory directory is " + dir
	if team {
		s += "\nTeam memory is in team/."
	}
	return s + "\n"
}

func withSep(dir string) string {
	if dir == "" || strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir
	}
	return dir + string(filepath.Separator)
}

const guidanceFull = `# Memory

Your memory directory is {DIR}

What you write there outlasts this conversation: the next session in this
project starts with its index. Keep in it what will make later work better
and that nothing else records: who the user is, how they want you to work,
and where the project stands.

## Types

Every memory has one of four types:
- user: who the user is: role, expertise, how they like answers.
- feedback: a correction from the user, or an approach they confirmed.
  State the rule, then a "Why:" line with the reason and a "How to apply:"
  line saying when it comes into play.
- project: work in progress, goals, decisions and deadlines that the
  repository does not show. Write dates as dates (2026-03-05, not "next
  Thursday"), and add "Why:" and "How to apply:" lines.
- reference: where to look outside the repository: dashboards, trackers,
  documents, channels.

## What not to save

- What the repository already records: code structure, conventions the
  code shows, its history, how a bug was fixed. Read the code instead.
- What only matters to this conversation: the current task, temporary state.
- Secrets of any kind: passwords, API keys, tokens, private keys.
When the user asks you to remember something, save it; when they ask you
to forget something, delete or correct the memory.

## How to save

Two steps, every time:
1. Write the memory to a file of its own, such as
   {DIR}feedback_testing.md, starting with frontmatter:
     ---
     name: a short title
     description: one line saying when this memory is relevant
     metadata:
       type: user, feedback, project or reference
     ---
   followed by the memory. Update an existing file rather than adding a
   near duplicate.
2. Add a line for it to {DIR}MEMORY.md:
   "- [Title](file.md) — one-line hook", under 150 characters.
MEMORY.md is only an index: never write a memory's content into it. Only
its first 200 lines are loaded, so keep it short, and remove the line of a
memory you delete.

## When to read

The index below is what you know you remember. Open a topic file when its
line bears on the task, when the user refers to earlier work, and before
asking the user something they may already have told you.

## Before relying on a memory

A memory records what was true when it was written. Before you recommend
or act on something it names (a file, a function, a flag, a command),
check that it still exists and still works that way. When a memory turns
out to be wrong, correct it or delete it.
`

const teamFull = `## Team memory

Team memory is {TEAM}

It is shared with everyone who works on this project, and indexed by its
own team/MEMORY.md. Save a memory there only when it helps every teammate:
project decisions, conventions, reference pointers. Memories about the
user, and feedback meant for you alone, stay in the private directory.
Never put a secret in team memory: it is copied to a shared store. Team
memories take the same two steps, with the line in team/MEMORY.md. When a
private and a team memory disagree, trust the newer and fix the other.
`

const guidanceShort = `# Memory

Your memory directory is {DIR}

It outlasts this conversation. To save a memory, write it to a file of its
own with frontmatter (name, description, metadata.type: user, feedback,
project or reference), then add the line "- [Title](file.md) — hook" to
MEMORY.md, which is only an index. Do not save what the repository
records, what only matters now, or secrets. Check that what a memory names
still holds before relying on it.`

const teamShort = `Team memory, shared and never for secrets, is in team/, with its
own team/MEMORY.md.`

// A Prompt is the memory part of an agent's context: memstore's guidance
// followed by the loaded index, and, for team memory, the team index.
type Prompt struct {
	// Dir is the memory directory.
	Dir string
	// Index is the loaded MEMORY.md.
	Index Index
	// Team adds the team directory's guidance and index.
	Team      bool
	TeamIndex Index
}

// Render writes the prompt within maxUnits UTF-16 units (no limit when
// maxUnits <= 0). What does not fit goes in this order: the guidance
// shrinks to a paragraph, then to one line; then the team index loses
// lines from its end, then the index does, and a note names the files
// that hold the whole indexes. shrunk reports whether anything was left
// out.
func (p Prompt) Render(maxUnits int) (text string, shrunk bool) {
	sections := []section{{heading: "## " + indexName, body: indexBody(p.Index)}}
	paths := []string{filepath.Join(p.Dir, indexName)}
	if p.Team {
		sections = append(sections, section{heading: "## team/" + indexName, body: indexBody(p.TeamIndex)})
		paths = append(paths, filepath.Join(p.Dir, "team", indexName))
	}
	for d := DetailFull; d <= DetailMinimal; d++ {
		s := join(Guidance(p.Dir, p.Team, d), sections)
		if maxUnits <= 0 || Units(s) <= maxUnits {
			return s, d != DetailFull
		}
	}
	guidance := Guidance(p.Dir, p.Team, DetailMinimal)
	note := "\n[Cut to fit " + strconv.Itoa(maxUnits) + " characters: read the whole index in " + strings.Join(paths, " and ") + ".]\n"
	// Cut the last section first: the team index, then the index.
	for i := len(sections) - 1; i >= 0; i-- {
		room := maxUnits - Units(join(guidance, sections)) + Units(sections[i].body) - Units(note)
		if room >= Units(sections[i].body) {
			continue
		}
		if room < 0 {
			room = 0
		}
		sections[i].body = FitUnits(sections[i].body, room)
		if s := join(guidance, sections) + note; Units(s) <= maxUnits {
			return s, true
		}
	}
	// Not even the headings and the note fit: the limit is too small to
	// say anything whole.
	return prefixUnits(join(guidance, sections)+note, maxUnits), true
}

type section struct{ heading, body string }

func join(guidance string, sections []section) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(guidance, "\n"))
	for _, s := range sections {
		b.WriteString("\n\n")
		b.WriteString(s.heading)
		b.WriteString("\n\n")
		b.WriteString(s.body)
	}
	b.WriteByte('\n')
	return b.String()
}

func indexBody(x Index) string {
	if x.Content == "" {
		return "(empty: no memories saved yet)"
	}
	return x.Content
}

// FitUnits is the longest run of whole lines from the start of s that
// fits in n UTF-16 units (without the line feed that ends the last), or,
// when not even the first line fits, its first n units.
func FitUnits(s string, n int) string {
	head := prefixUnits(s, n)
	if len(head) == len(s) {
		return s
	}
	if len(head) < len(s) && s[len(head)] == '\n' {
		return head
	}
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		return head[:i]
	}
	return head
}
